"""Recall's scores mean the same for every query: calibrated, not relative to the top."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Principal
from engram.memory import Memory
from engram.recall import (
    DEFAULT_MIN_SCORE,
    ContextBoost,
    MiniLMEmbedder,
    confidence,
    cosine_confidence,
    keyword_coverage,
    pool_size,
)
from engram.stores.cold import LongTermStore, open_store

ME = Principal("acme", "ann")
FACTS = [
    "The dog Rex sleeps on the red sofa",
    "Quarterly reports go out as PDF files",
    "Lives in Lisbon near the river Tagus",
    "Takes the train to work on Mondays",
    "Allergic to peanuts and shellfish",
]
RELATED = {
    "What is my pet called?": FACTS[0],
    "What food should I avoid?": FACTS[4],
    "Tell me about Lisbon": FACTS[2],
}
UNRELATED = "What is the capital of the red planet?"
"""Shares one word ("red") with a fact, so the relevance floor lets it through."""


def remember_all(memory: Memory, who: Principal, *facts: str) -> None:
    for fact in facts:
        memory.remember(who, fact)


def assert_answered_first(memory: Memory, who: Principal, answers: dict[str, str]) -> None:
    """Each question's block leads with the memory holding its answer's words."""
    for question, words in answers.items():
        texts = [i.text for i in memory.recall(who, question).items]
        assert texts and words in texts[0], (question, texts)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder(runtime="numpy", threads=1)


@pytest.fixture
def store(embedder: MiniLMEmbedder) -> Iterator[LongTermStore]:
    with open_store("memory://", embedder=embedder) as opened:
        for fact in FACTS:
            opened.remember(ME, fact)
        yield opened


def test_a_related_query_scores_above_the_default_min_score(store: LongTermStore) -> None:
    for query, fact in RELATED.items():
        best = store.recall(ME, query, k=3)[0]
        assert best.record.text == fact and DEFAULT_MIN_SCORE < best.score <= 1.0, query


def test_an_unrelated_query_scores_below_it_though_its_relative_score_is_top(
    store: LongTermStore,
) -> None:
    found = store.recall(ME, UNRELATED, k=3)
    plain = store.recall(ME, UNRELATED, k=3, context=None)
    assert found and max(r.score for r in found) < DEFAULT_MIN_SCORE
    assert plain[0].relevance > 0.8  # rank fusion alone calls the best candidate relevant
    assert store.recall(ME, UNRELATED, k=3, min_score=DEFAULT_MIN_SCORE) == []


def test_min_score_keeps_what_answers_and_drops_the_rest(store: LongTermStore) -> None:
    kept = store.recall(ME, "What is my pet called?", k=5, min_score=DEFAULT_MIN_SCORE)
    assert [r.record.text for r in kept] == [FACTS[0]]
    every = store.recall(ME, "What is my pet called?", k=5)
    assert len(every) == 5 and all(0.0 <= r.score <= 1.0 for r in every)


def test_a_question_nothing_answers_gets_an_empty_block(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    with Memory.open(tmp_path, embedder=embedder) as memory:
        memory.remember(ME, "Prefers reports as bullet points")
        assert memory.recall(ME, "What is the name of my dog?").items == ()
        memory.remember(ME, "My dog is called Rex")
        block = memory.recall(ME, "What is the name of my dog?")
        assert [i.text for i in block.items] == ["My dog is called Rex"]
        everything = memory.recall(ME, "What is the name of my dog?", min_score=0.0)
        assert len(everything.items) == 2


PROFILE = [
    "My manager is Tom.",
    "I live in Leeds.",
    "I'm allergic to penicillin.",
    "I prefer reports as PDF.",
    "My daughter plays the violin.",
    "I drive a Volvo XC60.",
    "I'm learning Portuguese for a trip to Lisbon.",
    "I take the train to work.",
]
ANSWERED = {
    "Who is my boss?": PROFILE[0],
    "Which medicine am I allergic to?": PROFILE[2],
    "What format do I want my reports in?": PROFILE[3],
    "What instrument does my daughter play?": PROFILE[4],
    "What car do I drive?": PROFILE[5],
    "What language am I studying?": PROFILE[6],
    "How do I commute?": PROFILE[7],
}
NOT_ANSWERED = [
    "Which airline do I usually fly?",
    "What's the weather tomorrow?",
    "Do I have a mortgage?",
    "What video games do I play?",
    "How many siblings do I have?",
]
"""Personal questions this profile does not answer: with MiniLM their best cosines with it
are 0.18-0.25, above the relevance floor (0.2) but not answers (each was shown a fact
when scores were centred on the floor)."""


@pytest.mark.parametrize("tags", [("fact",), ("preference",)])
def test_a_profile_answers_what_it_holds_and_nothing_else(
    tmp_path: Path, embedder: MiniLMEmbedder, tags: tuple[str, ...]
) -> None:
    """As recalled memories, and as profile facts (looked up apart, on every call: they
    must answer the question as much as a memory must to be shown)."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        for fact in PROFILE:
            memory.remember(ME, fact, tags=tags)
        for question, fact in ANSWERED.items():
            assert fact in [i.text for i in memory.recall(ME, question).items], question
        for question in NOT_ANSWERED:
            assert memory.recall(ME, question).items == (), question


FAMILY = [
    "My husband Marco is a chef.",
    "My son Leo is in third grade.",
    "I have a golden retriever called Biscuit.",
    "My mum lives in Cork.",
]
OTHERS = [
    "What is my daughter's name?",
    "What does my wife do?",
    "Where does my father live?",
    "Who is my dentist?",
    "What is my brother's job?",
]
"""Questions about others than the family members the facts name: MiniLM scores each
0.2-0.4 against one of them (the daughter against the son, the father against the mum)."""


def test_a_question_about_another_relative_gets_an_empty_block(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(memory, ME, *FAMILY)
        for question in OTHERS:
            assert memory.recall(ME, question).items == (), question
        asked = {
            "What does my husband do for a living?": FAMILY[0],
            "What grade is my son in?": FAMILY[1],
            "What is my dog's name?": FAMILY[2],
            "Where does my mother live?": FAMILY[3],
        }
        for question, fact in asked.items():
            assert [i.text for i in memory.recall(ME, question).items][:1] == [fact], question


def test_confidences_are_absolute() -> None:
    assert cosine_confidence(0.3, 0.2) == pytest.approx(0.5)  # 0.1 above the floor
    assert cosine_confidence(0.15, 0.2) < 0.05 < 0.95 < cosine_confidence(0.45, 0.2)
    assert cosine_confidence(None, 0.2) == 0.0
    texts = ["we went camping", "a trip", "the trip home", "hi"]
    rare, common, _, none = keyword_coverage("camping trip", texts)
    assert none == 0.0 and 0 < common < rare < 1
    assert keyword_coverage("camping trip", ["camping trip"]) == [pytest.approx(1.0)]
    assert keyword_coverage("what is it", ["what is it"]) == [0.0]
    assert confidence(0.0, 1.0) == 1.0 and confidence(0.5, 0.0) == 0.5
    assert confidence(0.0, 1 / 3) < 0.12


def test_the_pool_grows_with_the_memory_and_the_results_asked_for() -> None:
    boost = ContextBoost()
    memories = (0, 10, 100, 600, 10_000, 1_000_000)
    for k in (1, 10, 30, 300):
        sizes = [pool_size(boost, n, k) for n in memories]
        assert sizes == sorted(sizes)
        assert sizes[0] == max(k, boost.pool_floor)
        assert sizes[-1] == pool_size(boost, None, k)  # what the searches fetch
        assert sizes[-1] == min(boost.pool_ceiling, max(boost.pool_floor, 10 * k))
    assert pool_size(boost, 600, 10) == 100  # 10 per result asked for
    assert pool_size(boost, 600, 300) == 980  # 40 * sqrt(600): every turn of a chat log
    assert pool_size(boost, 10**6, 300) == boost.pool_ceiling
    assert pool_size(boost, 600, 2000) == 2000  # never fewer than asked for
    assert pool_size(ContextBoost(pool=7), 10_000, 3) == 7
    assert pool_size(ContextBoost(pool=7), 10_000, 30) == 30


def test_the_pools_best_confidence_is_the_best_of_every_candidate() -> None:
    """The best confidence is taken from the candidates holding a query term and the one
    of highest cosine only; it must equal the best over every candidate."""
    import random

    from engram.recall import Candidate, Weights, stored_stems
    from engram.stores.cold._candidates import Ranking, _confidences

    rng = random.Random(3)
    words = ["red", "sofa", "dog", "lake", "train", "pdf", "report", "river"]
    for _ in range(200):
        found = []
        for n in range(rng.randint(1, 40)):
            text = " ".join(rng.choices(words, k=rng.randint(1, 6)))
            sim = None if rng.random() < 0.2 else rng.uniform(-0.2, 0.9)
            stems = None if rng.random() < 0.5 else stored_stems(text)
            found.append(Candidate(f"m{n}", 0.0, "", -1, "", text, sim, stems=stems))
        query = " ".join(rng.sample(words, 2))
        coverage = keyword_coverage(query, [c.text for c in found])
        every = [
            confidence(cosine_confidence(c.similarity, 0.3), share)
            for c, share in zip(found, coverage, strict=True)
        ]
        best, own = _confidences(
            query, found, Ranking(Weights(), 0.3), range(len(found)), introduced={}, renamed=False
        )
        assert best == max(every)
        assert [own[n] for n in range(len(found))] == every


def test_a_question_about_someone_the_memory_never_named_gets_an_empty_block(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """MiniLM scores "What did Sarah say about the budget?" against "My manager Tom wants
    the Q3 report by Friday" as it would an answer: no memory names Sarah."""
    ana = Principal("acme", "ana")
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(
            memory,
            ana,
            "My manager Tom wants the Q3 report by Friday.",
            "Priya recommended a Thai place called Siam Garden.",
            "I visited Lisbon in May and loved the trams.",
            "I prefer reports as PDF.",
        )
        for question in (
            "What did Sarah say about the budget?",
            "What does Kevin want for the Q4 report?",
            "Which restaurant did Oliver suggest?",
            "Is Netflix cheaper than Hulu?",
        ):
            assert memory.recall(ana, question).items == (), question
        assert_answered_first(
            memory,
            ana,
            {
                "What does Tom want from me?": "My manager Tom",
                "Which restaurant did Priya suggest?": "Siam Garden",
                "When did I go to Lisbon?": "Lisbon in May",
                "What does Ana prefer for reports?": "PDF",  # the user, by name
            },
        )


def test_a_question_about_the_user_naming_a_thing_no_memory_names_is_still_answered(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """A brand, place or product a question names beside its subject ("What did I order
    from *Amazon*?") is not whom it asks about: "I bought a new blender online" answers
    it, though no memory names Amazon (each got an empty block when every capitalised
    word counted as a name)."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(
            memory,
            ME,
            "I bought a new blender online last week.",
            "I usually watch crime documentaries in the evening.",
            "My phone is a Pixel 7.",
            "I moved to Denver two years ago.",
            "I'm allergic to shellfish.",
            "My manager Tom wants weekly status emails.",
        )
        assert_answered_first(
            memory,
            ME,
            {
                "Draft the weekly status update for Dana": "status emails",  # a request: the user's
                "What did I order from Amazon?": "blender",
                "What do I watch on Netflix?": "documentaries",
                "Which Android phone do I have?": "Pixel",
                "How long have I lived in Colorado?": "Denver",
                "Can I eat Lobster?": "shellfish",
                "What does the user watch on Netflix?": "documentaries",
            },
        )


def test_a_question_about_a_relative_is_not_answered_by_the_users_own_fact(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """MiniLM ranks "I work as an accountant" first for "What did my mother do for work?"
    (0.74 against the mother's own fact's 0.55): the user's own fact is about someone else
    than the mother. A spouse is a wife or a husband."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(
            memory,
            ME,
            "I work as an accountant.",
            "My mom is a retired teacher.",
            "My spouse is a dentist.",
        )
        assert_answered_first(
            memory,
            ME,
            {
                "What did my mother do for work?": "teacher",
                "What's my wife's job?": "dentist",
                "What is my job?": "accountant",
            },
        )
        assert memory.recall(ME, "What does my brother do for a living?").items == ()


def test_a_question_about_the_user_is_not_answered_by_a_relatives_fact(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """MiniLM and the keyword "live" put "My sister lives in Toronto" first for "Which city
    do I live in?" (0.83 against 0.79): a memory about the user's people alone says
    nothing of the user, so its cosine vouches for nothing there; asked of the sister, it
    answers. "What do I do for a living?" had the sister's city and the user's first (0.90
    each, on the stem "live"), the designer third: "for a living" reads as "job"."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(
            memory,
            ME,
            "My sister lives in Toronto.",
            "I live in Porto with my partner.",
            "My rent is 900 euros a month.",
            "I'm a freelance graphic designer.",
        )
        assert_answered_first(
            memory,
            ME,
            {
                "Which city do I live in?": "Porto",
                "Where does my sister live?": "Toronto",
                "How much rent do I pay?": "900",
                "What do I do for a living?": "designer",
            },
        )


NAMED_FAMILY = (
    "My daughter Emma is seven.",
    "My daughter goes to Lincoln Elementary.",
    "Leo is my son.",
    "My son is allergic to peanuts.",
    "My wife's name is Priya.",
    "My wife works as an architect.",
    "My brother Tom lives in Leeds.",
    "I work as an accountant.",
)


def test_a_relative_asked_of_by_name_is_not_answered_by_another_ones_fact(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """A question may name a relative the memory introduced ("My daughter Emma is seven"):
    it asks of the daughter, so "My son is allergic to peanuts" (MiniLM: 0.86 for "Is
    Emma allergic to anything?") and the user's own job are about someone else, while the
    daughter's facts and any memory naming Emma still answer. The question's topic is asked
    of the relative too: "What is Priya's job?" finds "My wife works as an architect"
    (MiniLM: 0.2 against the question)."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(memory, ME, *NAMED_FAMILY)
        shown = {
            question: [i.text for i in memory.recall(ME, question).items]
            for question in (
                "Is Emma allergic to anything?",
                "Is Tom allergic to anything?",
                "What school does Leo go to?",
                "What does Emma do for work?",
                "What does Tom do for work?",
                "How old is Leo?",
            )
        }
        others = {  # (each question's relative aside: about someone else)
            "Is Emma allergic to anything?": "My son is allergic to peanuts.",
            "Is Tom allergic to anything?": "My son is allergic to peanuts.",
            "What school does Leo go to?": "My daughter goes to Lincoln Elementary.",
            "What does Emma do for work?": "My wife works as an architect.",
            "What does Tom do for work?": "I work as an accountant.",
            "How old is Leo?": "My daughter Emma is seven.",
        }
        for question, other in others.items():
            assert other not in shown[question], (question, shown[question])
        assert "I work as an accountant." not in shown["What does Emma do for work?"]
        for question, words in {
            "What school does Emma go to?": "Lincoln",
            "Is Leo allergic to anything?": "peanuts",
            "What does Priya do for work?": "architect",
            "What is Priya's job?": "architect",
            "Where does Tom live?": "Leeds",
        }.items():
            texts = [i.text for i in memory.recall(ME, question).items]
            assert any(words in t for t in texts), (question, texts)


def test_a_relative_asked_of_is_found_by_the_name_a_memory_gives_them(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """ "What does my husband do?" asks of the husband; a memory says he is Gareth ("I live
    in Cardiff with my husband Gareth"), so "Gareth works for the council" answers it,
    though it names no husband (MiniLM: 0.14 against the question). Another relative's
    name does not answer ("What does my sister do?" shows nothing of Gareth's)."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(
            memory,
            ME,
            "I live in Cardiff with my husband Gareth.",
            "Gareth works for the council.",
            "I teach science at Fitzalan High.",
            "My sister Ffion is a nurse in Swansea.",
            "I drink oat milk.",
        )
        for question, words in {
            "What does my husband do?": "council",
            "What is my husband's job?": "council",
            "What does my sister do?": "nurse",
        }.items():
            texts = [i.text for i in memory.recall(ME, question).items]
            assert any(words in t for t in texts), (question, texts)
        texts = [i.text for i in memory.recall(ME, "What does my sister do?").items]
        assert "Gareth works for the council." not in texts, texts


def test_another_chosen_thing_or_named_relative_does_not_answer(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """ "My favourite band is ..." is no answer to "What's my favourite film?" (MiniLM:
    about 0.5, and the shared word "favourite"), while "My favourite movie is Alien" is
    one. "Lucia goes to a Montessori nursery" is about the daughter Lucia, not the sister
    asked of, and a head of department is no wife or mother."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        remember_all(
            memory,
            ME,
            "My favourite band is Vetusta Morla.",
            "My favourite food is arroz negro.",
            "Our daughter Lucia is 4.",
            "Lucia goes to a Montessori nursery.",
            "My head of department is Mrs. Evans.",
        )
        for question in (
            "What's my favourite film?",
            "What's my favourite colour?",
            "What does my sister do?",
            "What's my wife's name?",
            "What's my mother's name?",
        ):
            assert not memory.recall(ME, question).items, question
        for question, words in {
            "What's my favourite band?": "Vetusta",
            "What's my favourite dish?": "arroz",
            "Where does my daughter go to school?": "Montessori",
            "Who is my head of department?": "Evans",
        }.items():
            texts = [i.text for i in memory.recall(ME, question).items]
            assert any(words in t for t in texts), (question, texts)
        remember_all(memory, ME, "My favourite movie is Alien.")
        texts = [i.text for i in memory.recall(ME, "What's my favourite film?").items]
        assert texts == ["My favourite movie is Alien."], texts


TRIP = """# Trip plan

## Flights
We fly to Lisbon on 12 May with TAP, seats 14A and 14B.

## Hotel
Hotel Avenida, booked for four nights, breakfast included.

## Todo
- Buy travel insurance
"""


def test_document_passages_are_shown_only_when_they_answer(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """Passages are scored as memories are (calibrated, not relative to the best found):
    a question no document answers gets none, whatever the documents hold."""
    with Memory.open(tmp_path, embedder=embedder) as memory:
        memory.documents.write_text(ME, "trips/lisbon.md", TRIP)
        for question in (
            "What is the capital of Mongolia?",
            "What's my favourite football team?",
            "Done",
        ):
            assert memory.recall(ME, question).items == (), question
        hotel = [i.text for i in memory.recall(ME, "Which hotel did we book in Lisbon?").items]
        assert any(text.startswith("Hotel Avenida") for text in hotel), hotel
        flight = memory.recall(ME, "When is the flight?").items
        assert [i.text for i in flight] == [TRIP.splitlines()[3]]
        assert 0.4 <= flight[0].score < 1.0
