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

Names work the same way at the scale of the whole memory: a question whose names
("What did *Sarah* say about the trip?", "When did I visit *Rome*?") occur in none of the
memories recall found (:func:`knows_none`) is about someone or something the memory has
never heard of, so no memory's cosine can vouch for an answer.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection, Sequence
from functools import cache

from engram.recall._lexical import Stems
from engram.recall._relevance import stem

_GROUPS: dict[str, str] = {
    "partner": "wife husband spouse girlfriend boyfriend fiance",
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
    "supervisor": "boss", "colleagues": "colleague", "friends": "friend",
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


_HAVE = r"(?:have|has|had|got|adopted)"
_MENTIONS = re.compile(rf"\b(?:my|our|his|her|their|your|{_HAVE})\b|['\u2019]s\b", re.I)


def _compatible(one: str, other: str) -> bool:
    groups = _group_of()
    return one == other or groups.get(one) == other or groups.get(other) == one


def about_someone_else(asked: frozenset[str], text: str) -> bool:
    """Whether a memory of this ``text`` names only others than the people and pets
    ``asked`` (:func:`people_named` of the question) can be; False when either names none."""
    if not asked:
        return False
    told = people_named(text)
    return bool(told) and not any(_compatible(a, t) for a in asked for t in told)


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
_ENGLISH = frozenset(
    "what who when where which why how did does do is are was were the my i of about".split()  # noqa: SIM905
)
"""Words that mark a question as English, whose capitals are names."""
_TITLE = re.compile(r"\b(Dr|Mr|Mrs|Ms|Mx|Prof|St|Sr|Jr)\.")


def names_in_query(query: str) -> frozenset[str]:
    """The stems of the names an English ``query`` gives: capitalised words after the
    first of each sentence ("What did *Tom* say about *Lisbon*?"), months, days and the
    like aside."""
    found: set[str] = set()
    if not _ENGLISH & set(re.findall(r"[a-z]+", query.lower())):
        return frozenset()  # (German capitalises every noun: no names read there)
    query = _TITLE.sub(r"\1", query.strip())  # ("Dr. Smith" ends no sentence)
    for sentence in re.split(r"(?<=[.!?])\s+", query):
        for word in re.findall(r"[A-Za-z][\w'\u2019-]*", sentence)[1:]:
            bare = re.sub(r"['\u2019]s$", "", word)
            if _CAPITALISED.fullmatch(bare) and bare not in _NOT_NAMES:
                found.add(stem(bare.lower()))
    return frozenset(found)


def knows_none(names: frozenset[str], docs: Sequence[Stems], known: Collection[str] = ()) -> bool:
    """Whether none of ``names`` (:func:`names_in_query`) occurs in ``docs`` (the stems of
    the memories recall found; a name counts as a word's start: "Mel" in "Melanie",
    "Japan" in "Japanese") nor among ``known`` (words that name the user: their
    namespace's parts). A question about someone or something a memory has never named
    cannot be answered by it."""
    if not names or any(n in known for n in names):
        return False
    return not any(f" {n}" in doc for n in names for doc in docs)
