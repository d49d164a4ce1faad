"""What a user says of themselves, stated as a fact about them (pure, rules, English).

The Market Analyst's slot rules read a few preferences ("Risk tolerance: conservative");
everything else a user tells it about themselves ("I never invest in tobacco
companies", "My time horizon is about ten years", "I hold 200 shares of AMD") would be
lost with the conversation when no chat model extracts facts. :func:`statements` keeps
each such clause as a fact in the third person ("User never invests in tobacco
companies", "User's time horizon is about ten years"), so the user's words are the
provenance and the fact reads as one. A clause is kept when it starts with "I" or "my"
and states how things are: questions, requests ("can you...", "I want a brief on NVDA"),
what only holds for now ("I only have a few minutes today") and what the slot rules
already read are left out; a statement before a request is kept ("I hate jargon, explain
things simply please": "User hates jargon."). A standing instruction ("Please always include a risk
section", "Never use jargon", "From now on, keep briefs under a page") is kept too, as a
constraint ("User asks to always include a risk section."); a one-off one ("Compare AAPL
and MSFT") is not. So is an exclusion ("Please avoid crypto", "I'm Muslim, so no
interest-bearing investments please": "User asks for no interest-bearing investments."),
unless it points at something at hand ("avoid this one", "no charts today"); the reason
given with it is not kept. An instruction that follows from a statement is standing too
("I live in Singapore, so report in SGD": "User lives in Singapore." and "User asks to
report in SGD."), and a reason given first is a statement ("Since I'm retired, I prefer
dividend stocks").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple


class Statement(NamedTuple):
    """A fact about the user: its third-person text, its tags, and the user's words."""

    text: str
    tags: tuple[str, ...]
    quote: str


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
"""Where a sentence ends (not at the dot of "a@b.com", "3.5" or "P/E")."""
_CLAUSE = re.compile(
    r"\s*(?:[;,]\s*(?:and|but|so)?|\s(?:and|but|so))\s+"
    r"(?=(?:i|my|always|never|don't|do not|please)\b)",
    re.I,
)
"""Where a sentence's next clause about the user starts: "I'm a cautious investor *and* I
want...", "I gave up tobacco stocks*,* I hold bonds now", "Analyse NVDA *and* never skip
the risk section"."""
_EXCLUSION_START = re.compile(
    r"(?:[;,]\s*|\s)(?=so\s+(?:please\s+)?(?:no|avoid|exclude)\b)"
    r"|(?:[;,]\s*(?:and\s+|but\s+)?|\s(?:and|but)\s+)(?=(?:please\s+)?(?:avoid|exclude)\b)",
    re.I,
)
"""Where an exclusion starts inside a sentence: "I'm Muslim*, so* no interest-bearing
investments please", "I like banks *but* avoid insurers". ("so" stays with the exclusion:
it marks one that follows from what the user said of themselves.)"""
_IMPERATIVES = (
    r"(?:report|show|give|use|quote|keep|write|explain|include|focus|list|express|convert"
    r"|format|put|stick|limit|highlight|flag|mention|summari[sz]e|skip|add|lead|start|label"
    r"|round|price|denominate|cite|translate|talk|go|make)"
)
"""Verbs an instruction that follows from what the user said starts with ("I live in
Singapore, so *report* in SGD")."""
_INSTRUCTION_START = re.compile(
    rf"[;,]\s*(?=so\s+(?:please\s+)?(?:{_IMPERATIVES}|send|forward|e-?mail|mail|share|upload"
    r"|post|export|copy|cc|wire|pay|transfer)\b)",
    re.I,
)
"""Where such an instruction starts inside a sentence (one that sends something somewhere
is cut off too, and kept as nothing: see :data:`_SENDS`)."""
_REASON_FIRST = re.compile(
    r"^(?:since|because|as)\s+(?P<reason>(?:i|i'm|i've|my|we|we're)\b[^,]+),\s*(?P<main>\S.*)$",
    re.I,
)
"""A sentence that gives its reason first ("Since I'm retired, I prefer dividend stocks"):
both are the user's."""
_EXCLUSION = re.compile(
    r"^(?:(?P<no>no)|(?P<verb>avoid|exclude|stay away from|steer clear of|keep away from"
    r"|leave out|(?:don't|do not) (?:include|recommend|suggest|pick|buy)))\s+(?P<what>\w.*)$",
    re.I,
)
"""An exclusion: "no X", "avoid X", "exclude X", "don't recommend X"..."""
_NOT_EXCLUDED = frozenset(
    """thanks thank worries worry problem problems idea way doubt need rush hurry matter
    kidding clue wonder one sorry questions question more""".split()  # noqa: SIM905
)
"""First words after "no" that make no exclusion ("No thanks", "No worries, take your
time", "No idea")."""
_AT_HAND = re.compile(r"\b(?:this|that|these|those|here|it|them)\b", re.I)
"""Words pointing at something at hand: an exclusion for this request only."""
_LEAD = re.compile(
    r"^(?:(?:also|and|but|so|btw|by the way|fyi|oh|well|actually|anyway|just so you know)"
    r"[,:]?\s+)+",
    re.I,
)
_PREAMBLE = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|bear in mind|don't forget|for the record"
    r"|for context)(?:\s+that)?[,:]?\s+(?=(?:i|i'm|i've|i'd|i'll|my)\b)",
    re.I,
)
"""Words asking the assistant to keep what follows ("Remember that I hate long reports")."""
_AFTERWORD = re.compile(
    r",?\s*(?:(?:so|and)\s+)?(?:please\s+)?(?:keep|bear)\s+(?:that|this|it)\s+in\s+mind\b.*$",
    re.I,
)
"""The same said after the statement ("I'm retiring in 2030, so keep that in mind")."""
_HOUSEHOLD = re.compile(
    r"^we(?:'re|\s+are)?\s+(?:(?:now|currently|still|already)\s+)?(?:own|rent|live"
    r"|bank|earn|save|invest|hold|expecting|saving|planning|moved|relocated|pay|share|have\s+"
    r"(?:two|three|four|five|\d+)\s+(?:kids|children|sons|daughters))\b",
    re.I,
)
"""What a household says of itself ("We own our house outright", "We're expecting our
second child"): the user's too. Not any "we" ("We discussed NVDA last time" may be the
user and the assistant)."""
_OWN = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my)\b", re.I)
_WHAT_I_AM = re.compile(r"^i(?:'m|\s+am)\s+(?!(?:in|out|on|off|not|so|just|all|it)\b)[\w-]+$", re.I)
"""What the user is, in two words ("I'm vegan", "I'm retired", "I'm Dana")."""
_JUST_NOW = re.compile(
    r"^i(?:'m|\s+am)\s+(?:fine|ok|okay|good|great|well|ready|back|here|there|sorry|confused"
    r"|lost|sure|done|busy|tired|glad|kidding|joking|listening|waiting|all\s+set)\b"
    r"[\s,!.]*(?:thanks|thank\s+you|though|too)?[\s,!.]*$",
    re.I,
)
"""How the user is just now ("I'm fine, thanks", "I'm ready", "I'm sorry"): no fact."""
_ADDRESSED = re.compile(r"\b(?:you|your|please|let's|let me)\b", re.I)
"""Words of a request to the assistant, not a statement of the user's."""
_ASKS = re.compile(
    r"^i(?:'d| would)?\s+(?:really\s+)?(?:want|need|like|love|wish)\s+(?:a|an|the|some\b"
    r"|to\s+(?:see|know|compare|get|have|check|look|read|hear|talk|discuss|ask|analy[sz]e"
    r"|review|find|go|focus|understand|learn|make|be|run|do|try|explore|dig|cover|include"
    r"|skip|add|open|show))\b"
    r"|^i(?:'m| am)\s+(?:looking|asking|wondering|curious|interested\s+in\s+(?:a|an|the))\b",
    re.I,
)
"""A request for this run ("I want a competitor analysis", "I'd like to see..."), not a
preference ("I want my reports as PDF") or a goal ("I want to retire at 60")."""
_FOR_NOW = re.compile(
    r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening|time|once)"
    r"|for now|a few minutes|in a hurry|in a rush)\b",
    re.I,
)
"""What holds only for now: no durable fact."""
_PLEASE = re.compile(r"^(?:please|kindly|and|also)[,\s]+|[,\s]+please$", re.I)
_LASTING = re.compile(
    r"\b(?:always|never|from now on|going forward|in future|in the future|every time|each time"
    r"|don't ever|do not ever)\b",
    re.I,
)
"""Words that make an instruction last beyond this request."""
_FOR_GOOD = re.compile(r",?\s*\b(?:from now on|going forward|in (?:the )?future)\b,?", re.I)
_NOT_IMPERATIVE = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|our|you|you're|your|he|she|it|it's|they|their|the|a|an"
    r"|this|that|these|those|there|what|who|when|where|which|why|how|is|are|was|were|do|does"
    r"|did|can|could|would|should|will)\b",
    re.I,
)
"""First words of a statement or a question, not of an instruction."""
_SENDS = re.compile(
    r"\b(?:send|sends|forward|email|e-mail|mail|share|upload|post|transfer|copy|cc|bcc|wire"
    r"|pay|export)\b|@|https?://|www\.",
    re.I,
)
"""An instruction that sends something somewhere: the shape of an exfiltration, so it is
never made a standing fact from the conversation (the user can still remember it)."""
_CONSTRAINT = re.compile(
    r"\b(?:never|don't|do not|won't|will not|can't|cannot|avoid|only|must|no more than"
    r"|at most|exclude|refuse)\b",
    re.I,
)
_PREFERENCE = re.compile(r"\b(?:prefer|like|love|hate|dislike|favou?rite|rather|want)\b", re.I)
_ADVERBS = frozenset(
    """never always usually only often rarely sometimes generally mostly really also still
    just now currently typically normally mainly primarily already actually
    """.split()  # noqa: SIM905
)
_FIRST = (
    (re.compile(r"^i(?:'m| am)\b", re.I), "User is"),
    (re.compile(r"^i(?:'ve| have)\b", re.I), "User has"),
    (re.compile(r"^i(?:'d| would)\b", re.I), "User would"),
    (re.compile(r"^i(?:'ll| will)\b", re.I), "User will"),
    (re.compile(r"^i\s+(?:don't|do not)\b", re.I), "User doesn't"),
    (re.compile(r"^i\s+(?:didn't|did not)\b", re.I), "User didn't"),
    (re.compile(r"^i\s+(?=(?:was|can|can't|cannot|could|should|must|might|may|won't)\b)", re.I),
     "User "),
    (re.compile(r"^my\s+(?P<who>[\w-]+)\s+and\s+i\b", re.I), "User and their {who}"),
    (re.compile(r"^we(?:'re|\s+are)\b", re.I), "User's household is"),
    (re.compile(r"^we\s+have\b", re.I), "User's household has"),
    (re.compile(r"^my\b", re.I), "User's"),
)  # fmt: skip
_LATER = (
    (re.compile(r"\bi'm\b|\bi am\b", re.I), "they're"),
    (re.compile(r"\bi've\b", re.I), "they've"),
    (re.compile(r"\bi\b", re.I), "they"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bme\b", re.I), "them"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\bwe're\b|\bwe are\b", re.I), "they're"),
    (re.compile(r"\bwe've\b", re.I), "they've"),
    (re.compile(r"\bwe\b", re.I), "they"),
    (re.compile(r"\bour\b", re.I), "their"),
    (re.compile(r"\bours\b", re.I), "theirs"),
    (re.compile(r"\bus\b"), "them"),  # (not "US")
)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is"}
_JOINED_VERBS = frozenset(
    """report rebalance invest work live hold own rent save spend pay earn trade buy sell
    keep use prefer want need like love hate avoid plan follow track check read watch
    drive commute travel run manage lead teach study write support help care cover
    donate contribute reinvest withdraw borrow lend hedge diversify budget file bank
    shop cook eat drink play visit call email expect aim hope intend tend""".split()  # noqa: SIM905
)
"""Verbs that, after "and", "but" or "or" with no subject of their own, are the user's
too ("I live in Singapore and *report* in SGD"); a noun there stays as it is ("I like
apples and oranges"), as does a verb ending the clause ("my family and work")."""
_PAST = frozenset(
    """was were had did went came got made took gave kept left lost sold bought paid sent
    spent held found felt knew thought told said meant put set cut let ran began became
    brought caught chose drove ate fell fought forgot grew heard hid hit hurt laid led lent
    met quit read rode rose saw sat shut slept spoke stood stole stuck swam taught tore
    understood won wore wrote broke built burnt dealt dug drew dreamt learnt""".split()  # noqa: SIM905
)
"""Common irregular past forms: a verb in the past stays as it is ("I sold" -> "User
sold"), as does one ending in "-ed" (not "need", "feed")."""
_SAME_FORM = frozenset("read put set cut let hit hurt quit shut cost spread bet".split())  # noqa: SIM905
"""Verbs whose past is their present: in the past only with a word of past time ("I read
it last year"), else present ("I read them on my phone" -> "User reads ...")."""
_PAST_TIME = re.compile(r"\b(?:ago|last|yesterday|once|in\s+(?:19|20)\d\d|when\s+i\s+was)\b", re.I)
_ONLY_PAST = _PAST - _SAME_FORM
"""Forms that are past whatever else the clause says."""


def statements(text: str, covered: Sequence[str] = ()) -> list[Statement]:
    """The user's statements about themselves in ``text``, in the third person, with tags
    ``constraint`` ("never", "only", "avoid"...), ``preference`` ("prefer", "like"...) or
    ``profile``; clauses holding one of the ``covered`` phrases (what other rules read)
    are left out."""
    found: list[Statement] = []
    for sentence in (part.strip() for part in _SENTENCE_END.split(text) if part.strip()):
        parts = _clauses(_asked_after(sentence).rstrip(".!"))
        for at, part in enumerate(parts):
            clause = _LEAD.sub("", part.strip().replace("\u2019", "'"))
            clause = _before_request(_AFTERWORD.sub("", _PREAMBLE.sub("", clause)))
            reasoned = re.match(r"so\b", part.strip(), re.I) is not None
            standing = (
                _standing(clause, covered)
                or _exclusion(clause, covered, reasoned=reasoned)
                or (_following(clause, covered) if reasoned else None)
            )
            if standing is not None:
                found.append(Statement(standing, ("constraint",), sentence))
                continue
            reason = at + 1 < len(parts) and re.match(r"\s*so\b", parts[at + 1], re.I)
            if not _durable(clause, covered, reason=bool(reason)):
                continue
            fact = _third_person(clause)
            if fact is not None:
                found.append(Statement(fact, (_tag(clause),), sentence))
    return found


def _clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence`` about the user, "my wife and I ..." and "..., always"
    kept whole."""
    if (first := _REASON_FIRST.match(sentence)) is not None:
        main = first["main"]
        if _EXCLUSION.match(_PLEASE.sub("", main).strip(" ,")):
            main = f"so {main}"  # ("Since I'm Muslim, no ...": the reason of an exclusion)
        sentence = f"{first['reason']}, {main}"
    parts = [
        p
        for piece in _CLAUSE.split(sentence)
        for part in _EXCLUSION_START.split(piece)
        for p in _INSTRUCTION_START.split(part)
    ]
    out: list[str] = []
    for part in parts:
        if out and re.fullmatch(r"\s*my\s+[\w-]+", out[-1], re.I):
            out[-1] = f"{out[-1]} and {part}"
        elif out and _LASTING.fullmatch(part.strip(" .!")):
            out[-1] = f"{out[-1]}, {part.strip()}"
        else:
            out.append(part)
    return out


def _before_request(clause: str) -> str:
    """``clause`` without a request to the assistant that follows a comma ("I hate jargon,
    explain things simply please" -> "I hate jargon"); the clause itself when it starts
    with one."""
    parts = clause.split(",")
    for at, part in enumerate(parts[1:], start=1):
        if _ADDRESSED.search(part):
            return ",".join(parts[:at])
    return clause


def _asked_after(sentence: str) -> str:
    """``sentence`` without the question that ends it ("I hold 200 shares of AMD, should I
    buy more?" -> "I hold 200 shares of AMD"); "" for a question alone."""
    if not sentence.endswith("?"):
        return sentence
    return sentence.rsplit(",", 1)[0] if "," in sentence else ""


def _durable(clause: str, covered: Sequence[str], *, reason: bool = False) -> bool:
    """Whether ``clause`` states how things are for the user (see the module); in two
    words only what they are ("I'm vegan"), and not as the ``reason`` for what follows
    ("I'm Muslim, so no interest-bearing investments please")."""
    short = len(clause.split()) < 3 and (reason or not _WHAT_I_AM.match(clause))
    if short or _JUST_NOW.match(clause) or not (_OWN.match(clause) or _HOUSEHOLD.match(clause)):
        return False
    if _ADDRESSED.search(clause) or _FOR_NOW.search(clause):
        return False
    if _ASKS.search(clause) and not _LASTING.search(clause):  # ("I want to see ..., always")
        return False
    return not _covers(covered, clause)


def _covers(covered: Sequence[str], clause: str) -> bool:
    """Whether ``clause`` holds one of the ``covered`` phrases (what other rules read)."""
    lowered = clause.lower()
    return any(phrase.lower() in lowered for phrase in covered)


def _standing(clause: str, covered: Sequence[str]) -> str | None:
    """A standing instruction as a fact ("Please always include a risk section" -> "User
    asks to always include a risk section."), or None: an instruction is one with a word
    that makes it last ("always", "never", "from now on", "every time"), said as an
    imperative (not "I ...", not a question); a one-off ("Compare AAPL and MSFT") is none."""
    said = _PLEASE.sub("", clause).strip(" ,")
    if len(said.split()) < 3 or not _LASTING.search(said) or _NOT_IMPERATIVE.match(said):
        return None
    if _SENDS.search(said):  # ("always send a copy to ...": not remembered unasked)
        return None
    if _covers(covered, said):
        return None
    return _asks(_FOR_GOOD.sub("", said).strip(" ,"))


def _following(clause: str, covered: Sequence[str]) -> str | None:
    """An instruction that follows from what the user said of themselves, as a standing
    constraint ("I live in Singapore, so report in SGD" -> "User asks to report in SGD."),
    or None: one at hand ("so keep it short"), for now only or sending something
    somewhere is none."""
    said = _PLEASE.sub("", clause).strip(" ,")
    if not re.match(rf"{_IMPERATIVES}\b", said, re.I) or len(said.split()) < 2:
        return None
    if _AT_HAND.search(said) or _FOR_NOW.search(said) or _SENDS.search(said):
        return None
    return None if _covers(covered, said) else _asks(said)


def _exclusion(clause: str, covered: Sequence[str], *, reasoned: bool) -> str | None:
    """An exclusion as a standing constraint ("Please avoid crypto" -> "User asks to avoid
    crypto."), or None. "no X" is one only when said as a request ("please") or as
    following from what the user said ("I'm Muslim, so no ..."): "I have no debt, no kids"
    states facts. One pointing at something at hand ("avoid this one"), for now only ("no
    charts today") or sending something somewhere is none."""
    said = _PLEASE.sub("", clause).strip(" ,")
    asked = said != clause.strip(" ,")
    match = _EXCLUSION.match(said)
    if match is None or _FOR_NOW.search(said) or _AT_HAND.search(match["what"]):
        return None
    if _SENDS.search(said) or _covers(covered, said):
        return None
    if match["no"]:
        first = match["what"].split()[0].lower().strip(",;:")
        if not (asked or reasoned) or first in _NOT_EXCLUDED or "," in match["what"]:
            return None
        return f"User asks for no {_in_third_person(match['what'])}."
    return _asks(said)


def _asks(said: str) -> str:
    """An instruction as the user's ask: "Don't mention my employer" -> "User asks to not
    mention their employer."."""
    said = re.sub(r"^(?:don't|do not)\b", "not", said, flags=re.I)
    return f"User asks to {said[:1].lower()}{_in_third_person(said[1:])}."


def _in_third_person(text: str) -> str:
    """``text`` with the user's "I", "my", "me"... as "they", "their", "them"..."""
    for pattern, replacement in _LATER:
        text = pattern.sub(replacement, text)
    return text


def _tag(clause: str) -> str:
    if _CONSTRAINT.search(clause):
        return "constraint"
    return "preference" if _PREFERENCE.search(clause) else "profile"


def _third_person(clause: str) -> str | None:
    """``clause`` about "User": "I hold 200 shares" -> "User holds 200 shares"."""
    for pattern, start in _FIRST:
        if (match := pattern.match(clause)) is not None:
            head, rest = start.format(**match.groupdict()), clause[match.end() :]
            break
    else:
        words = clause.split()  # "I <adverbs> <verb> ..."
        at = 1
        while at < len(words) and words[at].lower() in _ADVERBS:
            at += 1
        if at >= len(words):
            return None
        if words[at].lower() not in _SAME_FORM or not _PAST_TIME.search(clause):
            words[at] = _third_singular(words[at])
        for i in range(at + 2, len(words) - 1):  # ("... and report in SGD")
            joined = words[i - 1].lower() in ("and", "but", "or")
            if joined and words[i] in _JOINED_VERBS:
                words[i] = _third_singular(words[i])
        who = "User's household" if words[0].lower() == "we" else "User"
        head, rest = who, " " + " ".join(words[1:])
    return " ".join(f"{head}{_in_third_person(rest)}".split()) + "."


def _third_singular(verb: str) -> str:
    """A verb's third person singular: "hold" -> "holds", "watch" -> "watches"."""
    lowered = verb.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered in _ONLY_PAST or (lowered.endswith("ed") and not lowered.endswith("eed")):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"
