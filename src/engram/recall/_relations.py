"""Whom a question and a memory are about, when that is a relative, a pet or a colleague
(pure, English).

A bi-encoder scores "What is my cat's name?" against "My wife's name is Priya" as high as
a real answer (all-MiniLM-L6-v2: 0.43): both ask or tell a name of someone close. Such a
memory is not an answer: it is about someone else. :func:`about_someone_else` tells so
when the memory names people or pets as someone's ("my wife", "our dog", "Deborah's
mom"; not "when I was a kid") and none of them can be one the question names so: the
same one ("mum" is "mother"), or one a group word covers ("my pet" answers for "my dog",
"my kids" for "my son"); "son" and "daughter", or "dog" and "cat", are two others. A
memory that names nobody so is left alone ("Rex loves the park" may well be about the
dog).

A question may name one of them instead ("What school does *Emma* go to?"): when a memory
says who that is ("My daughter Emma is seven", "Leo is my son", "My wife's name is Priya"),
the question asks of them as it would of "my daughter" (:func:`relatives_named`), so "My
son is allergic to peanuts" is about someone else for "Is Emma allergic to anything?", and
any memory naming Emma is about her; its topic is asked as "my daughter" too
(:func:`as_relatives`: "What is Priya's job?" finds "My wife works as an architect"). The
other way round, a question asking of "my husband" asks of the name a memory gives him
(:func:`names_of`, :func:`as_named`: "What does my husband do?" finds "Gareth works for
the council" when a memory says "my husband Gareth").

Names work the same way at the scale of the whole memory: a question asking about names
("What did *Sarah* say about the trip?", "Is *Netflix* cheaper than *Hulu*?") that occur
in none of the memories recall found (:func:`knows_none`) is about someone or something
the memory has never heard of, so no memory's cosine can vouch for an answer. A question
about the user asks about the names in its subject's place only: "What did I order from
*Amazon*?" is about the user, whatever memory answers it (:func:`names_in_query`).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import cache

from engram.recall._lexical import Stems
from engram.recall._relevance import stem

_GROUPS: dict[str, str] = {
    "partner": "wife husband girlfriend boyfriend fiance",
    "child": "son daughter",
    "parent": "mother father stepmother stepfather",
    "sibling": "brother sister",
    "grandparent": "grandmother grandfather",
    "grandchild": "grandson granddaughter",
    "pet": "dog cat horse parrot hamster rabbit",
    "kin": "aunt uncle cousin niece nephew",
    "colleague": "boss",
    "friend": "roommate flatmate neighbour",
    "doctor": "dentist therapist",
    "lawyer": "",
    "landlord": "",
    "teacher": "tutor coach mentor",
}
"""Who is who: each group word covers its members (and itself)."""
_SAME = {
    "kid": "child", "kids": "child", "children": "child", "baby": "child",
    "parents": "parent", "mom": "mother", "mum": "mother", "mommy": "mother",
    "dad": "father", "daddy": "father", "siblings": "sibling",
    "grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather",
    "puppy": "dog", "kitten": "cat", "pets": "pet",
    "spouse": "partner", "hubby": "husband", "fiancé": "fiance", "fiancée": "fiance",
    "fiancee": "fiance", "supervisor": "boss", "manager": "boss", "colleagues": "colleague",
    "line manager": "boss", "head of department": "boss", "team lead": "boss",
    "team leader": "boss", "coworker": "colleague", "co-worker": "colleague",
    "friends": "friend",
    "neighbor": "neighbour", "furry friend": "pet", "four-legged friend": "pet",
    "physician": "doctor", "gp": "doctor", "attorney": "lawyer", "landlady": "landlord",
}  # fmt: skip
"""Words for the same one ("mum" is "mother")."""


@cache
def _known() -> dict[str, str]:
    """Each word -> the one it names (a member or a group word)."""
    named = {word: word for members in _GROUPS.values() for word in members.split()}
    named.update({group: group for group in _GROUPS})
    named.update(_SAME)
    return named


@cache
def _possessed() -> re.Pattern[str]:
    """Someone of :func:`_known` as someone's: "my wife", "our two dogs", "his friends",
    "Deborah's mom", "the name of my dog", "I have a cat" (not "when I was a kid", "a
    dog shelter")."""
    words = "|".join(
        sorted((re.escape(w).replace(r"\ ", r"\s+") for w in _known()), key=len, reverse=True)
    )
    return re.compile(  # (a lookahead: "my mother's cat" names the mother and the cat)
        rf"(?=\b(?:my|our|his|her|their|your|[\w-]+['\u2019]s|{_HAVE}\s+(?:an?|\w+))\s+"
        rf"(?:[\w-]+\s+){{0,2}}?(?P<who>{words})(?:s|es)?\b)",
        re.IGNORECASE,
    )


@cache
def _group_of() -> dict[str, str]:
    return {member: group for group, members in _GROUPS.items() for member in members.split()}


def people_named(text: str) -> frozenset[str]:
    """The people and pets ``text`` (a question or a memory) names as someone's
    (:func:`_possessed`)."""
    if not _MENTIONS.search(text):  # (most texts name nobody: one quick test)
        return frozenset()
    known = _known()
    return frozenset(known[m.group("who").lower()] for m in _possessed().finditer(text))


@cache
def _introduced() -> tuple[re.Pattern[str], ...]:
    """Where a memory says who a name is: "my daughter Emma", "our puppy, Max", "Leo is my
    son", "my wife's name is Priya", "our dog is called Rex" (the relation's words in any
    case, the name capitalised)."""
    words = "|".join(
        sorted((re.escape(w).replace(r"\ ", r"\s+") for w in _known()), key=len, reverse=True)
    )
    mine = rf"(?i:\b(?:my|our)\s+(?:[\w-]+\s+)?(?P<who>{words}))"
    name = r"(?P<name>[A-Z][\w'\u2019-]*)"
    return (
        re.compile(rf"{mine},?\s+{name}"),
        re.compile(rf"\b{name}\s+(?i:is)\s+{mine}\b"),
        re.compile(
            rf"{mine}(?i:['\u2019]s\s+name\s+is|\s+is\s+(?:called|named)|,?\s+(?:called|named))"
            rf"\s+{name}"
        ),
    )


def introductions(names: frozenset[str], texts: Iterable[str]) -> dict[str, frozenset[str]]:
    """Who each of the ``names`` a question asks about (:func:`names_in_query`) is to the
    user, as ``texts`` (the user's own memories recall found: a turn someone else spoke
    says who a name is to them) say: "My daughter Emma is seven" makes "Emma" the
    daughter (:func:`_introduced`); a name no text introduces is left out."""
    if not names:
        return {}
    starts = {name[:3] for name in names}  # (a stem keeps its word's first letters)
    # (most texts name none of them: no pattern to run)
    naming = (text for text in texts if any(start in text.lower() for start in starts))
    found: dict[str, set[str]] = {}
    for said, who in _introduced_in(naming):
        if (name := stem(said.lower())) in names:
            found.setdefault(name, set()).add(who)
    return {name: frozenset(who) for name, who in found.items()}


def _introduced_in(texts: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(name as written, who that is to the user)`` for each introduction in ``texts``
    (:func:`_introduced`: "my husband Gareth" -> ("Gareth", "husband"))."""
    known = _known()
    for text in texts:
        if not _MENTIONS.search(text):
            continue  # (every introduction says "my" or "our")
        for pattern in _introduced():
            for match in pattern.finditer(text):
                if (said := match.group("name")) not in _NOT_NAMES:
                    yield said, known[re.sub(r"\s+", " ", match.group("who").lower())]


def who_is_who(texts: Iterable[str]) -> dict[str, frozenset[str]]:
    """Who each name ``texts`` (the user's own memories recall found) introduce is to the
    user, by the name as written: "I live in Cardiff with my husband Gareth" makes
    "Gareth" the husband (:func:`_introduced`)."""
    found: dict[str, set[str]] = {}
    for said, who in _introduced_in(texts):
        found.setdefault(said, set()).add(who)
    return {name: frozenset(who) for name, who in found.items()}


def names_of(
    asked: frozenset[str], people: Mapping[str, frozenset[str]]
) -> dict[str, frozenset[str]]:
    """The names ``people`` (:func:`who_is_who`) give the relatives and pets a question
    asks of (:func:`people_named` of it): "Gareth" for the husband, and so for the
    partner; one the memories never name is left out."""
    found: dict[str, set[str]] = {}
    for name, relations in people.items():
        for one in asked:
            if any(_compatible(one, who) for who in relations):
                found.setdefault(one, set()).add(name)
    return {who: frozenset(said) for who, said in found.items()}


def as_named(query: str, named: Mapping[str, frozenset[str]]) -> str:
    """``query`` with each relative that :func:`names_of` gives one name said by it: "What
    does my husband do?" -> "What does Gareth do?" (the way the memories about him speak
    of him: "Gareth works for the council")."""
    one = {who: next(iter(said)) for who, said in named.items() if len(said) == 1}
    if not one:
        return query
    known = _known()

    def said(match: re.Match[str]) -> str:
        name = one.get(known.get(re.sub(r"\s+", " ", match.group("who").lower()), ""))
        return match.group(0) if name is None else f"{name}{match.group('s') or ''}"

    return _relative_said().sub(said, query)


@cache
def _relative_said() -> re.Pattern[str]:
    """A relative of the user's said in a question: "my husband", "our dog's"."""
    words = "|".join(
        sorted((re.escape(w).replace(r"\ ", r"\s+") for w in _known()), key=len, reverse=True)
    )
    return re.compile(rf"\b(?i:my|our)\s+(?P<who>(?i:{words}))(?P<s>['\u2019]s)?\b")


def _names(text: str, name: str) -> bool:
    """Whether ``text`` has ``name`` as a whole word, or its possessive."""
    return name in text and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def relatives_named(names: frozenset[str], texts: Iterable[str]) -> frozenset[str]:
    """The relatives the ``names`` a question asks about are, as ``texts`` say
    (:func:`introductions`)."""
    return frozenset().union(*introductions(names, texts).values())


def as_relatives(query: str, introduced: Mapping[str, frozenset[str]]) -> str:
    """``query`` with each name :func:`introductions` gives one relative said as that
    relative: "What is Priya's job?" -> "What is my wife's job?"; a name within a longer
    one is another's ("Max Verstappen" is not the dog Max)."""
    one = {name: next(iter(who)) for name, who in introduced.items() if len(who) == 1}
    if not one:
        return query

    def said(run: re.Match[str]) -> str:
        words = run.group(0).split()
        lead = 1 if words[0].lower() in _ASKING else 0  # ("Did Max ...": Max alone)
        if len(words) - lead != 1:
            return run.group(0)
        name = re.fullmatch(r"(.*?)(['\u2019]s)?", words[-1])
        who = None if name is None else one.get(stem(name.group(1).lower()))
        if who is None or name is None:
            return run.group(0)
        return " ".join([*words[:lead], f"my {who}{name.group(2) or ''}"])

    return _CAPITALISED_RUN.sub(said, query)


_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)*")
"""Capitalised words in a row: one name ("Max"), or a longer one ("Max Verstappen", "Dr
Max") that is someone else's."""


_HAVE = r"(?:have|has|had|got|adopted)"
_MENTIONS = re.compile(rf"\b(?:my|our|his|her|their|your|{_HAVE})\b|['\u2019]s\b", re.I)


def _compatible(one: str, other: str) -> bool:
    groups = _group_of()
    return one == other or groups.get(one) == other or groups.get(other) == one


def about_someone_else(
    asked: frozenset[str],
    text: str,
    alone: bool = False,
    people: Mapping[str, frozenset[str]] | None = None,
) -> bool:
    """Whether a memory of this ``text`` names only others than the people and pets
    ``asked`` (:func:`people_named` of the question) can be; False when the question names
    none. A memory naming nobody is about someone else only when the question asks of them
    ``alone`` (:func:`others_only`) and the memory is the user's own: "I work as an
    accountant" does not say what the user's mother does. A name the memories introduced
    (``people``: :func:`who_is_who`) names that relative: "Lucia goes to a Montessori
    nursery" is about the daughter Lucia, not the sister asked of."""
    if not asked:
        return False
    told = people_named(text).union(
        *(who for name, who in (people or {}).items() if _names(text, name))
    )
    if not told:
        return alone and _of_the_user_alone(text)
    return not any(_compatible(a, t) for a in asked for t in told)


_CHOICE = re.compile(
    r"\b(?:my|our)\s+(?:all[- ]time\s+|current\s+|new\s+)?"
    r"(?P<kind>favou?rite|fave|dream|ideal|go-to)\s+(?P<what>[a-z]+(?:\s+show)?)\b",
    re.IGNORECASE,
)
_CHOSEN_SAME = {
    "movie": "film", "films": "film", "movies": "film", "novel": "book", "writer": "author",
    "group": "band", "musician": "singer", "artist": "singer", "track": "song",
    "dish": "food", "meal": "food", "beverage": "drink", "colour": "color", "tv show": "show",
    "series": "show", "program": "show", "programme": "show", "city": "place",
    "destination": "place", "spot": "place", "restaurant": "place", "team": "club",
    "favourite": "favorite", "fave": "favorite",
}  # fmt: skip
"""Words for one chosen thing ("my favourite *movie*" is "my favorite *film*")."""


def _chosen(text: str) -> set[tuple[str, str]]:
    """The chosen things ``text`` names as the user's: ("favorite", "film") of "my
    favourite movie"."""
    found = set()
    for match in _CHOICE.finditer(text):
        kind = match["kind"].lower()
        what = re.sub(r"\s+", " ", match["what"].lower())
        found.add((_CHOSEN_SAME.get(kind, kind), _CHOSEN_SAME.get(what, what)))
    return found


def choices_asked(question: str) -> frozenset[tuple[str, str]]:
    """The chosen things of the user's ``question`` asks of (("favorite", "film") of
    "What's my favourite movie?"); empty for most questions."""
    return (
        frozenset(_chosen(question))
        if "my " in question.lower() or "our " in question.lower()
        else frozenset()
    )


def another_choice(asked: frozenset[tuple[str, str]], text: str) -> bool:
    """Whether a memory of this ``text`` tells only other chosen things of the user's
    than those ``asked`` (:func:`choices_asked`): "My favourite author is Terry
    Pratchett" for "What's my favourite film?" (MiniLM: about 0.5), not "My favourite
    movie is Alien"."""
    if not asked:
        return False
    told = _chosen(text)
    return bool(told) and not (asked & told)


def of_the_user(question: str) -> bool:
    """Whether ``question`` asks of the user alone: "I" is in it ("Which city do I live
    in?", "Where am I from?"), and no relative, pet or colleague (:func:`people_named`)
    nor any name ("What did I tell Dana?" may be answered by what Dana said)."""
    return bool(_FIRST_PERSON.search(question)) and not (
        people_named(question) or _names_anywhere(question)
    )


def _names_anywhere(text: str) -> bool:
    """Whether ``text`` holds a capitalised word other than a sentence's first, "I" and
    the words of :data:`_NOT_NAMES`."""
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        for word in re.findall(r"[A-Za-z][\w'\u2019-]*", sentence)[1:]:
            bare = _bare(word)
            if _CAPITALISED.fullmatch(bare) and bare not in _NOT_NAMES:
                return True
    return False


def of_others_alone(text: str) -> bool:
    """Whether a memory of this ``text`` speaks of the user's people or pets without the
    user ("My sister lives in Toronto"; not "I live in Porto with my partner", nor "Rex
    loves the park", which names nobody as someone's): it does not say how things are
    for the user (:func:`of_the_user`)."""
    return not _FIRST_PERSON.search(text) and bool(people_named(text))


_SUBJECT = re.compile(r"\b(?:I|we)\b", re.IGNORECASE)
_USERS = re.compile(r"\b(?:my|our)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"(?<![\w'\u2019])I(?:['\u2019](?:m|ve|d|ll))?\b")


def others_only(question: str, relatives: bool = False) -> bool:
    """Whether ``question`` asks of the user's people or pets (:func:`people_named`) without
    the user in it ("What did my mother do for work?"; not "When do I walk my dog?", "What
    should we get my sister?"), nor anyone it names ("What did Nate make for his friend?":
    Nate's own words may answer), unless the names are the user's ``relatives``
    (:func:`relatives_named`: "What does Emma do for work?" when Emma is the daughter)."""
    if _SUBJECT.search(question):
        return False
    if relatives:
        return True
    return (
        bool(_USERS.search(question))
        and bool(people_named(question))
        and not names_in_query(question)
    )


@cache
def _anyone() -> re.Pattern[str]:
    """Any word of :func:`_known`, someone's or not ("the kids", "a dog")."""
    words = "|".join(sorted((re.escape(w) for w in _known()), key=len, reverse=True))
    return re.compile(rf"\b(?:{words})(?:s|es)?\b", re.IGNORECASE)


def _of_the_user_alone(text: str) -> bool:
    """Whether ``text`` speaks of the user ("I ...") and of nobody else: no relative, pet or
    colleague, and no capitalised word but a sentence's first ("I take Leo to football"
    may be about the son)."""
    if not _FIRST_PERSON.search(text) or _anyone().search(text):
        return False
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        words = re.findall(r"[A-Za-z][\w'\u2019-]*", sentence)[1:]
        if any(w[0].isupper() and not _FIRST_PERSON.fullmatch(w) for w in words):
            return False
    return True


_NOT_NAMES = frozenset(
    """I What When Where Who Whom Whose Which Why How Did Do Does Is Are Was Were Can Could
    Would Should Shall Has Have Had Will The A An In On At Of If My Mr Mrs Ms Dr Please
    Tell Show Give Remind OK Okay Hi Hey Hello Thanks""".split()  # noqa: SIM905
    + list(calendar.month_name[1:])
    + list(calendar.month_abbr[1:])
    + list(calendar.day_name)
)
"""Capitalised words that name nobody: question words, titles, months and days."""
_CAPITALISED = re.compile(r"[A-Z][a-z]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_AUXILIARIES = _words(
    "do does did is are was were has have had will would can could should shall may might must"
)
"""Verbs a question puts before its subject ("What did *Tom* say?", "Is *Netflix* ...")."""
_ENGLISH = _AUXILIARIES | _words("what who when where which why how the my i of about")
"""Words that mark a question as English, whose capitals are names."""
_TITLES = _words("Dr Mr Mrs Ms Mx Prof St Sr Jr")
_TITLE = re.compile(rf"\b({'|'.join(sorted(_TITLES))})\.")
"""A title's dot ("Dr. Smith"), which ends no sentence."""
_WH_CONTRACTED = re.compile(r"(?:what|who|where|when|how|why)['\u2019](?:s|re)")
_PERSONAL = _words(
    "i i'm i've i'd i'll me my mine myself we we're we've us our ours ourselves"
    " you you're your yours yourself user"
)
"""Words of a question about the user or the conversation (not about someone else)."""
_ASKING = _AUXILIARIES | _words("what who whom whose when where which why how")
"""First words of a question (one without its "?"); a request ("Analyse Altria", "Book a
table at Nobu") is the user's, like a question in the first person."""


def names_in_query(query: str) -> frozenset[str]:
    """The stems of the names an English ``query`` asks about.

    In a question about someone else (no "I", "my", "we", "you" nor "the user"; not a
    request, which is the user's: "Analyse Altria and Philip Morris"): "Which
    city have both *Jean* and *John* visited?", "Is *Netflix* cheaper than *Hulu*?"),
    every capitalised word after the first. In a question about the user or the
    conversation, only the names in its subject's place, after the verb that opens the
    question ("What does *Marco* think of my plan?"), a possessor ("*Smith's*
    appointment"), and the names joined to them ("Did *Jon* and *Gina* ...", "Has *Mary
    Jane* ..."). A name elsewhere in such a question says where or how, not whom it is
    about: "What did I order from Amazon?" is about the user, and a memory that never
    names Amazon ("I bought a blender online") may answer it. Telling "Rome" from
    "Lisbon" apart from "Colorado" and "Denver" would take knowing the world, so such
    names are left to the cosines. Months, days, titles and question words are no
    names."""
    found: set[str] = set()
    if not _ENGLISH & set(re.findall(r"[a-z]+", query.lower())):
        return frozenset()  # (German capitalises every noun: no names read there)
    query = _TITLE.sub(r"\1", query.strip())  # ("Dr. Smith" ends no sentence)
    for sentence in re.split(r"(?<=[.!?])\s+", query):
        words = re.findall(r"[A-Za-z][\w'\u2019-]*", sentence)
        asked = sentence.rstrip().endswith("?") or bool(words and words[0].lower() in _ASKING)
        personal = not asked or any(_bare(w).lower() in _PERSONAL for w in words)
        subject = named = not personal  # (the next name is asked about; one just was)
        for n, word in enumerate(words):
            bare = _bare(word)
            name = n > 0 and _CAPITALISED.fullmatch(bare) is not None and bare not in _NOT_NAMES
            if name and (subject or bare != word):
                found.add(stem(bare.lower()))
                subject = named = True
                continue
            lower = word.lower()
            if bare in _TITLES or not personal:
                continue  # ("Who is Dr Okafor?")
            joined = named and lower in ("and", "or")
            subject = joined or lower in _AUXILIARIES or bool(_WH_CONTRACTED.fullmatch(lower))
            named = False
    return frozenset(found)


def _bare(word: str) -> str:
    """``word`` without a possessive "'s"."""
    return re.sub(r"['\u2019]s$", "", word)


def knows_none(names: frozenset[str], docs: Sequence[Stems], known: Collection[str] = ()) -> bool:
    """Whether none of ``names`` (:func:`names_in_query`) occurs in ``docs`` (the stems of
    the memories recall found; a name counts as a word's start: "Mel" in "Melanie",
    "Japan" in "Japanese") nor among ``known`` (words that name the user: their
    namespace's parts). A question about someone or something a memory has never named
    cannot be answered by it."""
    if not names or any(n in known for n in names):
        return False
    return not any(f" {n}" in doc for n in names for doc in docs)
