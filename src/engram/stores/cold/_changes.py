"""What a statement says changed, when it gives no slot (pure, rules, English).

The slot rules (:mod:`engram.stores.cold._slots`) read an attribute's new value; these
read the rest of what a user says changed, for :class:`~engram.stores.cold.RuleResolver`:

- :func:`replaced`: a thing the user gave up, by its name or (with no capital) by its
  words ("I sold my Corolla and bought a Tesla", "I quit nursing and became a teacher",
  "I mostly write Rust now, not Python"), and whether more than that is said;
- :func:`names`: whether a stored statement of how things are for the user names it;
- :func:`switched_within_kind`: a switch that names only the new thing, within a common
  kind ("I switched to an iPhone"), and where it holds ("at home");
- :func:`changes_value`: a change word with the same subject, verb and thing ("Bob now
  takes his coffee with oat milk").

Statements about "the user" read as the user's own (:func:`~engram.stores.cold._slots.users_own`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engram.recall import stem
from engram.stores.cold._slots import (
    _ADVERBS,
    _COPULAS,
    _NOT_ATTRIBUTES,
    _NOT_NAMES,
    _NUMBER,
    _OWNED,
    _PERIODIC,
    _WEEKLY_TIMES,
    _clauses,
    _clean,
    _singular,
    users_own,
)

_NOT_SINCE = (
    r"\b(?:haven't|have\s+not|hasn't|has\s+not|not)\s+(?:been\s+)?[a-z]+\b"
    r"(?:\s+[a-z'-]+){0,4}?\s+since\s+(?!(?:this|today|yesterday|last\s+night|(?:mon|tues"
    r"|wednes|thurs|fri|satur|sun)day)\b)"
)
"""Not doing a thing since an event ("I haven't played tennis *since* my surgery"): a
change, as "any more" is (not since a day: "I haven't seen Tom since Monday")."""
_CHANGE = re.compile(
    r"\b(?:now|nowadays|these days|any ?more|instead|switched to|changed to|no longer"
    r"|going forward|stopped|quit|after all)\b|" + _NOT_SINCE
)
"""Words that say a statement replaces an earlier one ("Bob *now* takes his coffee ...")."""
_STARTED_DOING = re.compile(r"\b(?:started|begun|began)\s+[a-z]+ing\b")
"""A doing begun ("I've started taking milk in my coffee"): a change of how one does it."""
_ALSO = re.compile(
    r"\b(?:also|too(?=\s*(?:[,.!?;]|$))|as well|another"
    r"|(?<!or\s)more(?!\s+[a-z]+\s+(?:for|than|to|with)\b)|again and again)\b"
)
_FILLER = frozenset(
    """a an the my his her their our your its of in on at to for with and or but by from
    now nowadays these days anymore any more instead switched changed no longer not don't
    doesn't do does is are am was were be been has have had i me he she they we it this that
    haven't hasn't hadn't didn't never
    just really very usually always often still currently mostly would will after all
    only mainly generally normally typically""".split()  # noqa: SIM905
)
_CONTRACTED = re.compile(r"\b(i|we|you|he|she|they)'(d|m|ve|ll|re|s)\b")
_EXPANDED = {"d": "would", "m": "am", "ve": "have", "ll": "will", "re": "are", "s": "is"}
_WANT = frozenset("want wants prefer prefers like likes rather love loves wish".split())  # noqa: SIM905
"""Verbs of a wish: "I'd rather get reports as HTML" says what "I want reports as PDF" did."""
_GETTING = frozenset("get getting receive receiving see seeing be".split())  # noqa: SIM905
"""A verb a wish takes before its object ("rather *get* reports"): part of the wish."""
_FRAME = frozenset("by via from at in on through".split())  # noqa: SIM905
"""Prepositions that frame how or where one does a thing: two values in one frame ("I
commute *by* bus", "these days I commute *by* bike") cannot both be current. Not "with":
one talks or plays with many people ("I now talk with a therapist" adds to "I talk with my
mum")."""


class _Clause(NamedTuple):
    """What :func:`changes_value` compares of a short statement."""

    subject: str
    verb: str
    """The verb's stem; ``want`` for a wish's verbs ("would rather get", "prefer")."""
    frame: str
    """The preposition right after the verb when it is one of :data:`_FRAME`, else ""."""
    things: frozenset[str]
    """The content words after the verb, a plural as its singular ("mornings": "morning")."""
    stops: bool = False
    """Whether it says the verb's doing stopped as a whole ("I don't run anymore"), which
    ends any statement of doing it ("I go running every morning")."""
    head: str = ""
    """For a statement of what one is ("I'm on the night shift": verb ``be``), its last
    content word, the thing the value belongs to ("shift")."""


def _clause(text: str) -> _Clause | None:
    """The :class:`_Clause` of a short statement (None when it is too short to have one)."""
    clean = _CONTRACTED.sub(lambda m: f"{m.group(1)} {_EXPANDED[m.group(2)]}", _clean(text))
    words = re.findall(r"[a-z][a-z'-]*", clean)
    if len(words) < 3 or words[0] in _NOT_NAMES - {"i"}:
        return None
    words = words[: next((i for i, w in enumerate(words) if i > 2 and w in _WHY), len(words))]
    at = [i for i, w in enumerate(words) if i and w not in _FILLER]
    stops = bool(at) and (
        any(w in _STOPS for w in words[1 : at[0]]) or _ENDS_ALL.search(clean) is not None
    )
    if len(at) < 2 and not (at and stops):
        return None  # (but "I don't run anymore" says what stopped)
    rest = [words[i] for i in at]
    if rest[0] in _STOPPED | _STARTED and len(rest) > 1 and rest[1].endswith("ing"):
        rest = rest[1:]  # ("I stopped drinking coffee": what stopped is drinking coffee)
    if rest[0] in _GO and len(rest) > 1 and rest[1].endswith("ing"):
        rest = [rest[1], *rest[1:]]  # ("I go running": running is done, and is the thing)
    verb = re.sub(r"(?:es|s)$", "", rest[0]) if len(rest[0]) > 3 else rest[0]
    if re.fullmatch(_NUMBER, rest[0]) and words[at[0] - 1] in ("have", "has", "had"):
        verb, rest = "have", ["have", *rest]  # "I have *two* cats": a count of what one has
    if rest[0] in _WANT:
        verb = "want"
        rest = rest[:1] + rest[2:] if len(rest) > 2 and rest[1] in _GETTING else rest
    after = words[at[0] + 1] if at[0] + 1 < len(words) else ""
    if words[1] in _COPULAS and not _progressive(words[2 : at[0] + 1]):  # "I'm on the night shift"
        things = [_singular(w) for w in rest]
        return _Clause(words[0], "be", "", frozenset(things), head=things[-1])
    goal = after == "for" and rest[0].endswith("ing")  # ("I'm training for a 10k")
    return _Clause(
        words[0],
        verb,
        after if after in _FRAME or goal else "",
        frozenset(map(_singular, rest[1:])),
        stops=stops,
    )


def _one_verb(verb: str) -> str:
    """``verb``'s stem, one for verbs of taking a thing one uses ("I *get* the 8:15 train now"
    of "I *take* the 7:45 train")."""
    return _TAKING.get(stemmed := stem(verb), stemmed)


_TAKING = {"get": "take", "catch": "take", "use": "take"}
_WHEN_DONE = re.compile(rf"{_WEEKLY_TIMES}|every|daily|weekly|week|day")
"""When a thing is done ("on Mondays", "every morning"): no thing two statements share
unless the new one says it replaces ("I now take vitamin D every day" and "I've started
going to yoga on Mondays" leave "I take metformin every day" and "I go to the gym on
Mondays"; "I now drink coffee in the morning *instead*" is what "I drink tea in the
morning" was)."""
_REPLACING = re.compile(r"\b(?:instead|rather|switched|changed|swapped|replaced)\b")
_STOPPED = frozenset("stopped quit quitted".split())  # noqa: SIM905
_STARTED = frozenset("started begun began start".split())  # noqa: SIM905
"""Verbs that say a doing began ("I've *started* taking milk in my coffee"): the doing is
what is compared, and its beginning is a change."""
_GO = frozenset("go goes went going".split())  # noqa: SIM905
"""Verbs before the one that says what is done: "I *go* running" runs."""
_WHY = frozenset("because since due as after".split())  # noqa: SIM905
"""Words after which a statement says why or since when ("I don't run anymore *because*
of my knee"): no part of what it says changed."""


_STOPS = frozenset("don't doesn't haven't hasn't never".split())  # noqa: SIM905
_ENDS_ALL = re.compile(r"\b(?:any\s?more|no\s+longer)\b")


def _progressive(words: list[str]) -> bool:
    """Whether the words after a copula, up to its first content word, make a verb's
    progressive form: "(I'm) now training", not "(I'm) in the marketing team"."""
    return words[-1].endswith("ing") and all(w in _ADVERBS or w == "not" for w in words[:-1])


def changes_value(new: str, old: str) -> bool:
    """Whether ``new`` says that ``old`` has changed: a change word ("now", "these days",
    "instead"), the same subject and verb (a wish's verbs read as one: "I'd rather get
    reports as HTML from now on" → "I want reports as PDF"), and a thing both speak of
    ("Bob takes his coffee black" → "Bob now takes his coffee with oat milk") or the same
    frame (:data:`_FRAME`: "I commute by bus" → "These days I commute by bike"); never
    in a clause with "also" or "too" ("I now also like rock" adds to "I like jazz"; "We
    adopted another cat, so now I have three cats" gives the count)."""
    began = _CHANGE.search(new.lower()) is None
    if began and not _STARTED_DOING.search(new.lower()):
        return False
    replacing = _REPLACING.search(new.lower()) is not None
    new, old = _as_a_wish(users_own(new)), _as_a_wish(users_own(old))
    before = _clause(old)
    saying = [
        _clause(c) for c in _clauses(new) if not _ALSO.search(c.lower()) and not _ONE_OFF.search(c)
    ]  # (not "I walked the dog at 6 today, now I'm tired")
    if before is not None and not replacing:  # (what is done, not when: see _WHEN_DONE)
        before = before._replace(things=_what_is_done(before.things))
        saying = [said._replace(things=_what_is_done(said.things)) for said in saying if said]
    return before is not None and any(_changes(said, before) for said in saying if said)


_RESTATED = re.compile(
    r"\b(?:now|nowadays|these\s+days|lately|any\s?more|instead|no\s+longer|going\s+forward"
    r"|(?:switch|chang|mov|swapp|replac|rais|lower|increas|decreas|upp|bump|reduc|dropp|tighten"
    r"|loosen|extend|shorten)(?:e|es|ed)?|cut|risen|rose|fallen|fell|(?:up|down|back)\s+to"
    r"|latest|new|become|became)\b"
)
"""Words that say a value is a new one ("My emergency fund *now* covers 6 months", "Move my
weekly digest to Fridays", "The commute is *down to* 25 minutes")."""
_ONE_OFF = re.compile(
    r"\b(?i:today|tonight|yesterday|this\s+(?:time|morning|afternoon|evening|once)|for\s+once"
    r"|just\s+this)\b"
)
_OWNER = re.compile(r"\b(?P<who>[a-z]+)(?:'s|s')?\b")
_POSSESSIVE_NAME = re.compile(r"\b(?P<who>[A-Z][a-z]+)'s\b")


def _owners(text: str) -> frozenset[str]:
    """Whose a statement is besides the user's: the people it names ("my *wife*'s
    credit card", "my *son*'s best friend", "*Kim*'s car")."""
    words = {m["who"] for m in _OWNER.finditer(text.lower().replace("\u2019", "'"))}
    named = {m["who"].lower() for m in _POSSESSIVE_NAME.finditer(text)}
    return frozenset(words & _PEOPLE | named)


_PARTICLES = frozenset(
    "up down in on at to off out over back into onto from for of with by".split()  # noqa: SIM905
)
_DETERMINERS = frozenset("my our the a an his her their your".split())  # noqa: SIM905
_HOW_MANY = frozenset("every each other per few some many all most more less half".split())  # noqa: SIM905
"""How many or how often, a value ("every *other* week"), not which thing."""


def _another_of_its_kind(new: str, old: str) -> bool:
    """Whether ``new`` speaks of another thing of the kind ``old`` speaks of: a word both
    share comes after different words that say which ("my *car* insurance" and "my *home*
    insurance"), or after such a word in one and "my", "the"... in the other ("my laptop"
    and "my *work* laptop"); not "my weekly digest" twice, an adverb ("my fund *now*
    covers"), nor 10 and 20 minutes (a value)."""
    said, before = (re.findall(r"[a-z][a-z'-]*|\d\S*", t.lower()) for t in (new, old))

    def which(words: list[str], at: str) -> str | None:
        """The word that says which (a word of a phrase a determiner starts: "my *car*
        insurance"), a determiner right before (""), or anything else (None: "send
        reports", a verb)."""
        i = words.index(at)
        word = words[i - 1] if i else ""
        if word in _DETERMINERS:
            return ""
        start = i - 1
        while start > 0 and _a_modifier(words[start]):
            start -= 1
        in_a_phrase = start < i - 1 and words[start] in _DETERMINERS
        if not in_a_phrase or word in _PERIODIC or _RESTATED.fullmatch(word):
            return None  # ("my *weekly* budget" and "my *monthly* budget": one budget)
        return word

    for word in dict.fromkeys(said):
        if word not in before or word in _FILLER | _PARTICLES or _RESTATED.fullmatch(word):
            continue
        one, other = which(said, word), which(before, word)
        if one is not None and other is not None and one != other:
            return True
    return False


def _a_modifier(word: str) -> bool:
    """Whether ``word`` may say which thing a phrase names ("car", "weekly"): a word, not a
    filler or a particle."""
    return word[:1].isalpha() and word not in _FILLER | _PARTICLES | _DETERMINERS | _HOW_MANY


def restates(new: str, old: str) -> bool:
    """Whether ``new`` could give a new value of what ``old`` stated, by its words alone:
    a word of change (:data:`_RESTATED`), the same people (none, or the same kin), the same
    thing (:func:`_another_of_its_kind`), no "also" or "too", no one-off ("today") and no
    question. Whether it is the same statement is for the caller to judge (a sentence
    embedding's cosine)."""
    said = new.lower().replace("\u2019", "'")
    return (
        _RESTATED.search(said) is not None
        and not _ALSO.search(said)
        and not _ONE_OFF.search(said)
        and not new.strip().endswith("?")
        and _owners(new) == _owners(old)
        and not _another_of_its_kind(new, old)
    )


def _what_is_done(things: frozenset[str]) -> frozenset[str]:
    """``things`` without when they are done (:data:`_WHEN_DONE`)."""
    return frozenset(thing for thing in things if not _WHEN_DONE.fullmatch(thing))


_ASKED = re.compile(
    r"^(?i:(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|(?:starting|from)\s+today"
    r"|by\s+default)[, ]+)?(?i:please\s+|(?:can|could|would)\s+you\s+)?"
    r"(?i:(?:always|just|only)\s+)?"
    r"(?P<verb>(?i:send|give|show|use|make|keep|write|format|display|quote|email|deliver|put"
    r"|present|list|share|sort|include|address|call|text|message|remind|alert|notify|warn"
    r"|tell|ping|flag))\s+(?P<rest>\S.*)$"
)
"""A request of how things are to be done ("Please send my reports as Markdown", "Give me
detailed reports instead of short summaries"): a wish, as "I want ..." says it."""
_LASTING = re.compile(
    r"\b(?i:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|(?:starting|from)\s+today"
    r"|instead|any\s?more|no\s+longer|by\s+default|always|every\s+time|from\s+here\s+on)\b"
)
"""What makes a request a lasting wish ("from now on"), not a task ("Send me the report now")."""


def _as_a_wish(text: str) -> str:
    """A lasting request (:data:`_ASKED`, :data:`_LASTING`) as the user's wish ("From now on
    please send my reports as Markdown" → "I want my reports as Markdown from now on");
    anything else as it is."""
    asked = _ASKED.match(text.strip())
    # A request with "now" and nothing lasting is a task ("Send me the report now"); one
    # with neither stands ("Show prices in US dollars").
    if asked is None or (_LASTING.search(text) is None and _CHANGE.search(text.lower())):
        return text
    return f"I want {asked['rest']}"


def _changes(said: _Clause, before: _Clause) -> bool:
    """Whether one clause gives a new value of what ``before`` stated (see
    :func:`changes_value`): a statement of what one is only of the same thing ("I'm on
    the day shift now" of "I'm on the night shift", "I'm no longer allergic to cats"; not
    "I'm a fan of rock" of "I'm a fan of jazz")."""
    if (said.subject, _one_verb(said.verb)) != (before.subject, _one_verb(before.verb)):
        return False  # ("drinking" and "drink" are one verb)
    if said.verb == "be":
        return said.head == before.head
    if said.stops and not said.things:
        return True  # ("I don't run anymore" ends "I go running every morning")
    return bool(said.things & before.things) or (bool(said.frame) and said.frame == before.frame)


_DAYS = (
    r"(?i:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|week(?:end|day)s?|(?:jan|febr)uary|march"
    r"|april|may|june|july|august|september|october|november|december|christmas|easter)\b"
)
"""When one is off work ("I'm off *Friday*"), not a thing one gave up."""
_CAPITAL = r"(?:[A-Z0-9]|[a-z]{1,2}[A-Z])[\w+-]*(?:\.\w[\w+-]*)*"
_NAME = rf"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?{_CAPITAL}(?:\s+{_CAPITAL}){{0,2}}"
"""A thing or person named by capitals ("Corolla", "PDF", "Google Docs", "iPhone", "Dr.
Lee")."""
_OWN = r"(?i:(?:my|our|the)\s+)?(?i:(?:old|previous|former|current)\s+)?"
_REPLACED = re.compile(
    r"\b(?i:sold|traded(?:\s+in)?|replaced|swapped|ditched|dropped|got\s+rid\s+of|gave\s+away"
    r"|stopped(?=\s+(?:my|the|our)\s+\S+(?:\s+\S+)?\s+(?:lessons|classes|course|subscription"
    r"|membership|sessions|treatment|medication|tablets|pills)\b)"
    r"|cancell?ed|terminated|quit|quitted|(?:i'm|i\s+am)\s+off(?!\s+(?:on\s+)?(?:" + _DAYS + r"))"
    r"|gave\s+up(?:\s+on)?"
    r"|(?:switched|changed|upgraded|moved|transferred|shifted)\s+(?:away\s+)?"
    r"(?:(?i:my|our|all\s+my|all\s+our)\s+[a-z]+\s+|(?i:everything|it|them)\s+)?from"
    r"|went\s+from|stopped\s+[a-z]+ing(?:\s+(?:at|for|with|to|in|on))?|no\s+longer\s+use)\s+"
    rf"{_OWN}(?P<old>{_NAME})(?P<rest>.*)$"
)
_LEFT = re.compile(rf"\b(?i:left)\s+{_OWN}(?P<old>{_NAME})(?P<rest>.*)$")
"""Giving a thing up by leaving it ("I left Deloitte"): a switch only when what follows
names its successor ("and joined KPMG"), or of where the user works (:func:`left`); "I
left Paris on Monday" is a trip (quitting is always giving up: "I quit Netflix")."""
_COMPLETED = re.compile(
    rf"\b(?i:finished|completed|graduated\s+from|graduated\s+at|finished\s+at|finished\s+up\s+at)"
    r"\s+(?:(?i:my|the|our)\s+(?:[a-z'-]+\s+){1,2}?(?i:at|in|from)\s+)?"
    rf"{_OWN}(?P<old>{_NAME})"
)
"""Finishing a thing the user was doing ("I finished The Expanse", "I graduated from
UCL"): :func:`completed`."""
_ONGOING = re.compile(
    r"^(?:i(?:'m| am)\s+(?:(?:now|currently|still)\s+)?(?:[a-z]+ing\b|an?\s+(?:[a-z-]+\s+)?"
    r"student\b|enrolled\b)|i\s+(?:(?:now|currently|still)\s+)?(?:study|attend)\b)"
)
"""How a statement of a thing the user is in the middle of starts ("I'm reading ...",
"I'm studying at ...", "I'm a student at ...", "I study at ...")."""
_GONE = re.compile(
    rf"^(?i:the|my|our)\s+(?i:old\s+)?(?P<old>{_NAME})(?:['\u2019]s|\s+(?i:is|has))\s+(?i:gone|been\s+sold"
    r"|been\s+scrapped|been\s+written\s+off)\b(?P<rest>.*)$"
)
"""A thing of the user's said to be gone: "The Fiesta's gone, I've got a Corsa now"."""
_INSTEAD = re.compile(rf"\b(?i:instead\s+of|rather\s+than)\s+{_OWN}(?P<old>{_NAME})")
_BUT_NOT = re.compile(
    rf",\s*(?i:not|no\s+longer)\s+{_OWN}(?P<old>{_NAME})(?P<rest>\s*(?i:any\s?more)?\s*[.!]?)$"
)
"""A value said with the one it replaces: "I mostly write Rust now*, not Python*" (only
with a word of change: "I write Rust, not Python, on weekends" replaces nothing)."""
_GAVE_UP = re.compile(
    r"\b(?i:gave\s+up(?:\s+on)?|quit|quitted|ditched|stopped|dropped\s+out\s+of"
    r"|(?:sold|got\s+rid\s+of)(?=\s+(?:my|our)\b)|i'm\s+off|i\s+am\s+off|cut\s+out"
    r")\s+(?:(?i:my|our|the)\s+)?(?P<old>[a-z][a-z-]{2,})\b"
)
"""Giving up a thing named with no capital: "I gave up the violin", "I quit nursing", "I
stopped teaching piano", "I sold my bike" (found by the stems of its words: "nursing"
in "I work as a nurse")."""
_CUT_OUT = re.compile(r"\b(?i:cut)\s+(?:(?i:my|our|the)\s+)?(?P<old>[a-z][a-z-]{2,})\s+(?i:out)\b")
"""Giving up a thing by cutting it out: "I've cut milk out completely"."""
_THING_ENDS = re.compile(r"[,;.!?]|\b(?i:and|but|so|then|because|since|for|in\s+favou?r\s+of)\b")
_WHEN = re.compile(
    r"\b(?:(?:last|this|next)\s+\w+|(?:a\s+few|a\s+couple\s+of|a|an|one|two|three|\d+)\s+"
    r"(?:day|week|month|year|summer|winter|spring|autumn|fall|weekend|night|time)s?(?:\s+ago)?"
    r"|yesterday|today|recently|already|finally|for\s+good|altogether|completely|entirely"
    r"|any\s?more|after\s+all|at\s+last|cold\s+turkey|ago"
    r"|(?:in|on|by)\s+(?:(?:jan|febr)uary|march|april|may|june|july|august|september|october"
    r"|november|december|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|\d{4}|spring|summer"
    r"|autumn|fall|winter|week(?:end|day)s?|the\s+(?:morning|afternoon|evening|end)s?))\b",
    re.IGNORECASE,
)
"""When, or how completely, a thing was given up ("last month", "for good"): no part of
the thing, and nothing more said."""
_NOT_A_THING = _FILLER | frozenset(
    """it that this them those these everything something anything all some one work
    job yesterday today tonight recently already again now then early before last""".split()  # noqa: SIM905
)
"""Words after "gave up", "quit"... that name no thing of the user's ("I quit *it*";
"I quit my *job*" is the employer's slot; the filler words)."""
_OWN_STATEMENT = re.compile(r"^(?:i|i'm|i'd|i've|my|we|we're|we've|our)\b")
"""How a statement of the user's own starts (once cleaned)."""
_DIED = re.compile(
    rf"^(?:(?i:my|our)\s+(?:[a-z]+\s+){{1,2}})?(?!I\b|We\b|You\b)(?P<old>{_NAME})\s+(?:has\s+)?"
    r"(?:sadly\s+)?"
    r"(?:passed\s+away|died|passed(?=\s*(?:[,.!;]|$|\s+(?:last|in|on|this|yesterday|recently)\b)))\b"
    rf"|^(?i:we|i)(?:'ve|\s+have)?\s+(?i:(?:sadly|just|recently)\s+)?(?i:lost)\s+"
    rf"(?:(?i:our|my)\s+(?:[a-z]+\s+)?)?(?!I\b)(?P<lost>{_NAME})"
    r"(?=\s*(?:[,.!;]|$|\s+(?i:in|on|last|this|to|after|a|two|three|\d|yesterday|recently)\b))"
)
"""A death: "Max passed away last week", "our dog Rex died", "Nibbles passed last month",
"We lost Pixel last week" (:func:`died`; never "I passed in June")."""
_FOLLOWED = re.compile(
    r"^\s*(?:,\s*)?(?i:(?:and|then)\s+(?:\w+\s+)?"
    r"(?:bought|got|use|switched|moved|went|picked|joined|started|signed)"
    r"|for|with|to|into|in\s+favou?r\s+of)\b"
)
_ONCE = re.compile(
    r"\b(?:this time|just this once|this once|for now|for today|today only|for this (?:one|report|"
    r"week|trip|time|call|meeting))\b"
)
"""Words that make a request a one-off ("HTML instead of PDF *this time*"), no new value."""
_PAST = frozenset(
    """was were went had saw met took made came bought sold did left gave spent ate drank
    flew drove wrote visited used""".split()  # noqa: SIM905
)
"""First verbs of a statement of what the user did, not of how things are."""
_BODY = frozenset("hand hands arm arms head eyes voice mind".split())  # noqa: SIM905
_PEOPLE = _NOT_ATTRIBUTES - _OWNED - _BODY
"""Whose facts are theirs, not the user's ("my sister lives in ...")."""


def _switch(text: str) -> tuple[str, str] | None:
    """``(the thing given up, what the user has now)`` of a statement that names the
    thing: ("Corolla", "and bought a Tesla") of "I sold my Corolla and bought a Tesla",
    ("PDF", "I want HTML") of "I want HTML instead of PDF", ("Corolla", "") of "I sold my
    Corolla"; None for any other text."""
    if found := _INSTEAD.search(text):
        return found.group("old"), text[: found.start()]
    if (found := _BUT_NOT.search(text)) and _CHANGE.search(text.lower()):
        return found.group("old"), text[: found.start()]
    if (found := _LEFT.search(text)) and _FOLLOWED.match(found.group("rest")):
        return found.group("old"), found.group("rest")
    found = _REPLACED.search(text)
    if found is not None and not re.match(r"\s*off\b", found["rest"]):  # ("dropped Sam off")
        rest = found.group("rest")
        return found.group("old"), rest if _says_more(rest) else ""
    return _given_up(text)


def _given_up(text: str) -> tuple[str, str] | None:
    """``(the thing, what more is said)`` of :data:`_GAVE_UP` in ``text``: ("drinking
    coffee", ", now I drink tea") of "I stopped drinking coffee, now I drink tea"; None
    when it names no thing ("I quit *it*"; "I stopped *the* car": "stopped" gives up
    doing things)."""
    found = _GAVE_UP.search(text) or _CUT_OUT.search(text)
    if found is None or found["old"] in _NOT_A_THING:
        return None
    if found.group(0).lower().startswith("stopped") and not found["old"].endswith("ing"):
        return None
    tail = text[found.start("old") :]
    if found.re is _CUT_OUT:  # ("cut milk out completely": the thing is "milk")
        tail = found["old"] + text[found.end() :]
    end = _THING_ENDS.search(tail)
    thing, more = (tail[: end.start()], tail[end.start() :]) if end else (tail, "")
    said = " ".join(_WHEN.sub(" ", thing).lower().split())
    if not any(w not in _FILLER for w in re.findall(r"\b[a-z][a-z-]*", said)):
        return None
    return said, more if _says_more(more) else ""


def _says_more(rest: str) -> bool:
    """Whether ``rest``, what follows a thing given up, says more than when (:data:`_WHEN`):
    "and bought a Tesla" does, "last month." does not."""
    return bool(re.sub(r"[\s,.!]+", "", _WHEN.sub(" ", rest)))


def left(text: str) -> tuple[str, bool] | None:
    """The place ``text`` says the user left, by its name, and whether it says more than
    when ("Left Deloitte in March, I'm at KPMG now": ("Deloitte", True)), or None. Only
    where the user works is ended by it (:class:`~engram.stores.cold.RuleResolver`): one
    leaves a city for a trip."""
    text = users_own(text)
    found = _LEFT.search(text)
    if found is None:
        return None
    rest = _WHEN.sub(" ", found.group("rest")).strip()
    if not _said_of_the_user(text) or not (not rest or rest[0] in ",;.!" or _FOLLOWED.match(rest)):
        return None  # ("I left Deloitte's office at six", "I left Google at noon")
    return found.group("old"), _says_more(found.group("rest"))


def completed(text: str) -> str | None:
    """The thing ``text`` says the user finished ("I finished The Expanse and started
    Dune": "Expanse"; "I graduated from UCL in June": "UCL"), or None. It ends only a
    statement that the user is in the middle of it (:func:`ongoing`): "I work at UCL"
    goes on after a degree there."""
    text = users_own(text)
    found = _COMPLETED.search(text)
    return found["old"] if found is not None and _said_of_the_user(text) else None


def ongoing(text: str, name: str) -> bool:
    """Whether ``text`` says the user is in the middle of a thing named ``name`` ("I'm
    reading The Expanse", "I'm studying at UCL")."""
    text = users_own(text)
    return _ONGOING.match(_clean(text)) is not None and _named_in(text, name)


_BROKE_UP = re.compile(
    rf"^(?:(?P<who>{_NAME})\s+and\s+(?i:i)|(?i:i|we))\s+(?i:(?:have|'ve)\s+)?"
    r"(?i:(?:just|finally|recently|officially)\s+)?(?i:broke\s+up|split\s+up|separated"
    r"|divorced|called\s+it\s+(?:off|quits)|ended\s+things|(?:are|'re)\s*(?:n't|\s+not|\s+no\s+longer)"
    r"\s+together(?=\s*(?:any\s?more|now|[,.!;]|$)))"
    rf"(?:\s+(?i:with|from)\s+(?P<whom>{_NAME}))?\b"
    r"(?!\s+(?i:the|a|an|our|my|his|her|their|its|it|them|this|that)\b)"
)
"""A couple that ended: "Ellie and I broke up", "I split up with Mark"."""
_PARTNER = (
    r"(?i:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse|other\s+half"
    r"|engaged\s+to|married\s+to|seeing|dating|going\s+out\s+with|together\s+with)"
)


def broke_up(text: str) -> str | None:
    """Whom ``text`` says the user broke up with ("Ellie and I broke up last month":
    "Ellie"), or None."""
    found = _BROKE_UP.match(users_own(text).strip())
    if found is None:
        return None
    return found["who"] or found["whom"]


def partner_of_the_users(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` is the user's partner ("My girlfriend is called
    Ellie", "I'm engaged to Chris", "Mark is my boyfriend")."""
    said = re.escape(name)
    text = users_own(text)
    return (
        re.search(
            rf"\b(?i:my|our)\s+{_PARTNER}(?:'s\s+(?i:name|first\s+name)\s+is|\s+(?:(?i:is|'s)\s+)?"
            rf"(?:(?i:called|named)\s+)?)\s*{said}\b"
            rf"|^(?i:i'm|i\s+am|i)\s+(?:(?i:now|currently)\s+)?{_PARTNER}\s+{said}\b"
            rf"|\b{said}\s+(?i:is|'s)\s+(?i:my)\s+{_PARTNER}\b",
            text,
        )
        is not None
    )


_RESCHEDULED = re.compile(
    r"^(?:(?:my|our)\s+)?(?P<what>(?:[a-z]+'s\s+)?[a-z][\w-]*(?:\s+(?!is\b|has\b)[a-z][\w-]*)?)"
    r"(?:'s|\s+is|\s+has)?\s+"
    r"(?:now\s+|been\s+)?(?:(?:moved|changed|switched|shifted)\s+to|on(?=.*\bnow\b))\s+"
    rf"(?P<when>{_WEEKLY_TIMES})"
)
"""A thing the user does that moved to another day ("Yoga's moved to Fridays", "Football's
on Saturdays now")."""
_WEEKLY = re.compile(rf"\b{_WEEKLY_TIMES}", re.IGNORECASE)


def rescheduled(text: str) -> str | None:
    """What ``text`` says moved to another day or time ("Yoga's moved to Fridays":
    "yoga"), or None; it updates the user's statement of doing it then ("I do yoga on
    Tuesdays")."""
    found = _RESCHEDULED.match(_clean(text))
    if found is None or found["what"] in _NOT_A_THING or found["what"] in _PEOPLE:
        return None
    return found["what"]


def on_a_day(text: str, what: str) -> bool:
    """Whether ``text`` states that the user does ``what`` on a day or at a time of day
    ("I do yoga on Tuesdays")."""
    return _WEEKLY.search(text) is not None and names(text, what)


_UPGRADED = re.compile(
    r"^(?i:i|we)(?i:'ve|\s+have)?\s+(?i:(?:just|finally|now)\s+)?(?i:upgraded|downgraded"
    r"|moved\s+(?:up|down)|switched\s+plans?)\s+(?i:to)\s+(?:(?i:the|a|an)\s+)?"
    rf"(?P<brand>{_CAPITAL})\s+(?:{_CAPITAL}|(?i:plan|tier|subscription|package|membership"
    r"|account|version|edition))\b"
)
"""A move to another plan of a thing the user has ("I upgraded to Spotify Premium"): the
brand, whose stored plan it ends ("I'm on the basic Spotify plan")."""


def upgraded(text: str) -> str | None:
    """The brand ``text`` says the user moved to another plan of (:data:`_UPGRADED`), or
    None ("My wife upgraded to Spotify Premium" is hers)."""
    found = _UPGRADED.match(users_own(text).strip())
    return None if found is None else found["brand"]


_A_PLAN = re.compile(
    r"\b(?i:plan|tier|subscription|package|membership|account|version|edition|free|basic|standard"
    r"|premium|pro|plus|family|student|individual|lite|starter|business|enterprise)\b"
)


def on_a_plan(text: str, brand: str) -> bool:
    """Whether ``text`` states the user has a plan of ``brand`` ("I'm on the basic Spotify
    plan", "We have Netflix Standard"; not "I use Google Docs")."""
    return _A_PLAN.search(text) is not None and names(text, brand)


def died(text: str) -> str | None:
    """Who ``text`` says died ("Max passed away last week", "Our cat Kiwi died": "Max",
    "Kiwi"), or None."""
    found = _DIED.match(text.strip())
    return (found["old"] or found["lost"]) if found else None


def of_the_users(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` is one of the user's people or pets ("I have a dog
    named Max", "My son Leo is 7", "Leo is my son"; not "My favourite singer is Prince",
    not "I love Elvis")."""
    said = re.escape(name)
    return (
        re.search(
            rf"\b(?:named|called)\s+{said}\b|\b(?i:my|our)\s+(?:[a-z-]+\s+){{1,2}}?{said}\b"
            rf"|\b{said}\s+is\s+(?i:my|our)\b|\bname\s+is\s+{said}\b",
            users_own(text),
        )
        is not None
    )


def _said_of_the_user(text: str) -> bool:
    """Whether ``text`` (the user's own words) speaks of the user, and gives no more of a
    kind ("also", "too"): "I ...", "my ...", not "My wife switched from Chrome to Safari"."""
    clean = _clean(text)
    if _ALSO.search(text.lower()) or not _OWN_STATEMENT.match(clean):
        return False
    whose = re.match(r"^(?:my|our)\s+(\S+)", clean)
    return whose is None or whose.group(1) not in _PEOPLE


def replaced(text: str) -> tuple[str, bool] | None:
    """The thing ``text`` says the user gave up, by its name, and whether it says more
    than that (what replaced it, how things are now; not when: "last month"): "I sold
    my Corolla and bought a Tesla" → ("Corolla", True), "I switched from PDF to HTML" →
    ("PDF", True), "I want HTML instead of PDF" → ("PDF", True), "I quit nursing and
    became a teacher" → ("nursing", True), "I sold my Corolla last month" → ("Corolla",
    False), "I stopped going to the gym" → ("going to the gym", False);
    None for any other text, and for a one-off ("I'd like HTML instead of PDF this
    time")."""
    text = users_own(text)
    if (gone := _GONE.match(text.strip())) is not None and not _ALSO.search(text.lower()):
        return gone.group("old"), _says_more(gone.group("rest"))
    if not _said_of_the_user(text) or _ONCE.search(text.lower()):
        return None
    switch = _switch(text)
    if switch is None:
        return None
    return switch[0], bool(switch[1])


_KINDS: tuple[frozenset[str], ...] = tuple(
    frozenset(kind.split(","))
    for kind in (
        "iphone,android,android phone,pixel,galaxy,samsung,samsung galaxy,blackberry,oneplus",
        "windows,mac,macos,mac os,macbook,linux,ubuntu,chromebook,chrome os",
        "chrome,firefox,safari,edge,brave,opera,vivaldi",
        "spotify,apple music,tidal,deezer,youtube music,amazon music,pandora",
        "gmail,outlook,protonmail,proton mail,fastmail,yahoo mail",
        "whatsapp,telegram,signal,imessage,messenger",
        "dropbox,google drive,onedrive,icloud,icloud drive",
        "notion,evernote,obsidian,onenote,apple notes",
        "netflix,hulu,disney+,prime video,hbo max,apple tv+",
        "kindle,kobo,nook",
        "1password,lastpass,bitwarden,dashlane,keepass,keepassxc",
        "vs code,vscode,visual studio code,vim,neovim,emacs,pycharm,intellij,sublime text",
        "zoom,skype,webex,google meet",
        "waze,google maps,apple maps",
        "duckduckgo,bing,ecosia,kagi",
        "coffee,decaf,tea,green tea,black tea,herbal tea,matcha,hot chocolate",
        "milk,whole milk,skimmed milk,skim milk,oat milk,almond milk,soy milk,rice milk",
    )
)
"""Things of one kind, one of which a user has at a time: "I switched to an iPhone" says
the Android phone is gone. Switching is read only between things of a kind listed here
(which phone or computer, browser, music, mail, messaging, storage, notes, streaming,
e-reader, password manager, code editor, video calls, maps, search engine, hot drink or
milk; a name that
is also another thing's, "Google" or "Teams", is left out): the words alone cannot tell
which "I use ..." a switch replaces."""
_SWITCHED_TO = re.compile(
    r"^(?:i|we)(?:'ve| have)?\s+(?:now\s+|just\s+|recently\s+|finally\s+)?(?:switched"
    r"|moved(?:\s+(?:everything|it\s+all|all\s+my\s+[a-z]+|my\s+[a-z]+))?(?:\s+over)?|migrated"
    r"|gone\s+over|(?:changed|upgraded)(?:\s+my\s+[a-z]+)?)"
    r"\s+to\s+(?:an?\s+|the\s+)?(?P<rest>.+)$"
)
_ON_NOW = re.compile(
    r"^(?:i|we)(?:'m| am|'re| are)\s+(?:now\s+)?on\s+(?:an?\s+|the\s+)?(?P<rest>.+)$"
)
"""Being on a thing now ("I'm on iPhone now", "These days we're on Slack"): a switch, with
a word of change."""
_NOTHING_MORE = re.compile(
    r"^(?:\s+(?:\d[\w.]*|pro|max|plus|ultra|mini|air|se|lite|xl))*"
    r"(?:\s+(?:phone|browser|laptop|computer|app|instead|now|recently|yesterday|today"
    r"|last\s+\w+|this\s+\w+|(?:a\s+(?:few\s+|couple\s+of\s+)?|\d+\s+|\w+\s+)\w+\s+ago))*\s*$"
)
"""What may follow the new thing: its model ("an iPhone *15 Pro*"), its kind or when."""
_WHERE = re.compile(r"^(?:at|on|for|in)\s+(?:my\s+|our\s+|the\s+)?(?P<where>[a-z]+)\b")
"""Where a switch holds, said first or last: "*at home* I switched to Linux", "I switched
to Linux *on my laptop*"."""


class Switch(NamedTuple):
    """What :func:`switched_within_kind` reads of a switch."""

    rivals: frozenset[str]
    """The other things of the kind, one of which the user had."""
    where: str
    """Where the switch holds ("home" of "at home", "pc" of "on my home PC"), or ""."""

    def holds_in(self, text: str) -> bool:
        """Whether the switch holds where ``text`` does: a switch at home ends "I use
        Windows at home", not "I use Windows at work"."""
        return not self.where or _named_in(text.lower(), self.where)


def switched_within_kind(text: str) -> Switch | None:
    """The things of the same kind that ``text`` says the user switched away from ("I
    switched to an iPhone": every other phone) and where, or None (see :data:`_KINDS`)."""
    clean = _clean(users_own(text))
    where = ""
    first = _WHERE.match(clean)
    if first and _SWITCHED_TO.match(unplaced := clean[first.end() :].lstrip(", ")):
        where, clean = first["where"], unplaced
    found = _SWITCHED_TO.match(clean)
    if found is None and _CHANGE.search(text.lower()):
        found = _ON_NOW.match(clean)
    if found is None or _ALSO.search(clean) or _ONCE.search(clean):
        return None
    rest = found.group("rest")
    for kind in _KINDS:
        for name in sorted(kind, key=len, reverse=True):
            if not rest.startswith(name):
                continue
            after = rest[len(name) :].strip()
            if (last := _WHERE.match(after)) and not where:
                where, after = last["where"], after[last.end() :]
            if _NOTHING_MORE.match(f" {after}" if after else ""):
                return Switch(kind - {name}, where)
    return None


def names(text: str, name: str) -> bool:
    """Whether ``text`` states how things are for the user now ("I drive a Corolla", "My
    broker is Vanguard", "I switched from Slack to *Teams*"; not "I visited Paris", not
    "My sister lives in Paris", not the *Slack* of that switch) and names ``name`` (as
    written, a whole word)."""
    text = users_own(text)
    words = re.findall(r"[a-z][a-z'-]*", _clean(text))
    if not words or not _OWN_STATEMENT.match(words[0]):
        return False
    if (switch := _switch(text)) is not None:
        return _named_in(switch[1], name)
    rest = [w for w in words[1:] if w not in _ADVERBS]
    if not rest or rest[0] in _PEOPLE:
        return False
    if words[0] in ("my", "our"):  # "my broker is ...", not "my broker was ..."
        verb = next((w for w in rest if w in ("is", "are", "was", "were")), "")
        return verb not in ("was", "were") and _named_in(text, name)
    if rest[0] in _PAST or rest[0].endswith("ed"):  # "I visited ...", not "I use ..."
        return False
    return _named_in(text, name) and not _only_where_to(text, name)


_WHERE_TO = r"(?i:to|towards|into|from|via|through|past|across)\s+(?:the\s+)?"


def _only_where_to(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` only as where the user goes ("I drive *to London*
    every Friday"): a place one goes to is not a thing one has, which a move or a switch
    from it would end."""
    said = re.escape(name)
    everywhere = len(re.findall(rf"(?<![\w-]){said}(?![\w-])", text))
    return everywhere > 0 and everywhere == len(re.findall(rf"\b{_WHERE_TO}{said}(?![\w-])", text))


def _named_in(text: str, name: str) -> bool:
    """Whether ``text`` has ``name`` as a whole word; a thing named with no capital by
    the stems of its content words ("nursing" in "I work as a nurse", "going to the
    gym" in "I go to the gym on Mondays")."""
    if name.islower():
        stems = {stem(w) for w in re.findall(r"\b[a-z][a-z-]*", text.lower())}
        wanted = [w for w in re.findall(r"\b[a-z][a-z-]*", name) if w not in _FILLER]
        return all(stem(w) in stems for w in wanted)
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None
