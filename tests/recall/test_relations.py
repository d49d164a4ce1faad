"""Whom a question and a memory are about: relatives, pets and colleagues (pure)."""

from __future__ import annotations

import pytest

from engram.recall import (
    about_someone_else,
    as_named,
    as_relatives,
    introductions,
    knows_none,
    names_in_query,
    names_of,
    of_others_alone,
    of_the_user,
    others_only,
    people_named,
    relatives_named,
    stem,
    who_is_who,
)
from engram.recall._lexical import stems_of


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("What is my cat's name?", {"cat"}),
        ("What is the name of my dog?", {"dog"}),
        ("My wife's name is Priya", {"wife"}),
        ("Deborah's mom made cakes", {"mother"}),
        ("Max is my mother's cat", {"mother", "cat"}),
        ("I have a cat named Luna", {"cat"}),
        ("We adopted two kittens", {"cat"}),
        ("My furry friends love the park", {"pet"}),
        ("Our kids play chess", {"child"}),
        ("Who is my boss?", {"boss"}),
        ("When I was a kid we lived by the sea", set()),
        ("We raised money for a dog shelter", set()),
        ("I like cats", set()),
        ("", set()),
    ],
)
def test_people_and_pets_count_when_named_as_someones(text: str, who: set[str]) -> None:
    assert people_named(text) == who


@pytest.mark.parametrize(
    ("question", "memory", "elsewhere"),
    [
        ("What is my cat's name?", "My wife's name is Priya", True),
        ("What is my son's name?", "My daughter's name is Mia", True),
        ("Where does my father live?", "My mum lives in Cork", True),
        ("Who is my dentist?", "My husband Marco is a chef", True),
        ("What is the name of my dog?", "My pet Rex is a beagle", False),
        ("Where does my mother live?", "My mum lives in Cork", False),
        ("What do my kids study?", "My daughter studies law", False),
        ("What is my dog's name?", "Rex loves the park", False),
        ("What is my dog's name?", "My wife walks our dog Rex", False),
        ("Where do I live?", "My wife's name is Priya", False),
        ("What did Deborah's mom bake?", "Deborah: she baked cakes when I was a kid", False),
        ("What's my wife's job?", "My spouse is a dentist", False),
        ("What does my husband do?", "My partner Alex works as a nurse", False),
        ("What does my boss want?", "My manager Tom wants the Q3 report", False),
        ("Where did my partner propose?", "My fiancée proposed in Paris", False),
        # the user's own: about someone else than the relative a question asks of alone
        ("What did my mother do for work?", "I work as an accountant", True),
        ("Where does my sister live?", "I live in a flat by the river", True),
        # but not when the user is in the question, or the memory names someone
        ("When do I walk my dog?", "I walk the dog every morning", False),
        ("What did my kids paint?", "I took the kids painting on Sunday", False),
        ("When does my son play football?", "I take Leo to football on Saturdays", False),
        ("What does my wife do?", "We run a bakery together", False),
    ],
)
def test_a_memory_of_others_only_is_about_someone_else(
    question: str, memory: str, elsewhere: bool
) -> None:
    asked = people_named(question)
    assert about_someone_else(asked, memory, others_only(question)) is elsewhere


@pytest.mark.parametrize(
    ("question", "alone"),
    [
        ("What did my mother do for work?", True),
        ("What is Deborah's mom's name?", False),
        ("What flavour of ice cream did Nate make for his friend?", False),
        ("When do I walk my dog?", False),
        ("What should we get my sister for her birthday?", False),
        ("What's my dog's name?", True),
        ("Where do I live?", False),
    ],
)
def test_a_question_asks_of_others_alone_when_the_user_is_not_in_it(
    question: str, alone: bool
) -> None:
    assert others_only(question) is alone


INTRODUCED = (
    "My daughter Emma is seven.",
    "Leo is my son.",
    "My wife's name is Priya.",
    "Our dog is called Rex.",
    "My little sister, Ana, visited.",
    "My boss Dana wants the report.",
    "My son. Then Max called.",  # (no one introduced across a sentence's end)
    "My mum is lovely. Sam is great.",
)


@pytest.mark.parametrize(
    ("question", "who"),
    [
        ("What school does Emma go to?", {"daughter"}),
        ("Is Leo allergic to anything?", {"son"}),
        ("What does Priya do for work?", {"wife"}),
        ("Where does Rex sleep?", {"dog"}),
        ("How is Ana?", {"sister"}),
        ("What does Dana want?", {"boss"}),
        ("Who is Max?", set()),
        ("Where does Sam live?", set()),
        ("What is my cat's name?", set()),
    ],
)
def test_a_name_a_memory_introduces_as_a_relative_is_that_relative(
    question: str, who: set[str]
) -> None:
    assert relatives_named(names_in_query(question), INTRODUCED) == who


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What is Priya's job?", "What is my wife's job?"),
        ("Where does Rex sleep?", "Where does my dog sleep?"),
        ("Did Emma and Leo go to the zoo?", "Did my daughter and my son go to the zoo?"),
        ("Who is Max?", "Who is Max?"),
    ],
)
def test_a_question_names_an_introduced_relative_as_that_relative(question: str, said: str) -> None:
    introduced = introductions(names_in_query(question), (*INTRODUCED, "Leo is my son."))
    assert as_relatives(question, introduced) == said


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Where does Max sleep?", "Where does my dog sleep?"),
        ("Did Max and Priya go out?", "Did my dog and my wife go out?"),
        ("What did Max Verstappen win?", "What did Max Verstappen win?"),
        ("Did Lewis Max win?", "Did Lewis Max win?"),
        ("Is Dr Max in today?", "Is Dr Max in today?"),
    ],
)
def test_a_name_within_a_longer_one_is_someone_elses(question: str, said: str) -> None:
    introduced = {stem("max"): frozenset({"dog"}), stem("priya"): frozenset({"wife"})}
    assert as_relatives(question, introduced) == said


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What does my husband do?", "What does Gareth do?"),
        ("What is my husband's job?", "What is Gareth's job?"),
        ("What does my partner do?", "What does Gareth do?"),
        ("Where does my dog sleep?", "Where does Rex sleep?"),
        ("What does my sister do?", "What does my sister do?"),
        ("What do my husband and my sister like?", "What do Gareth and my sister like?"),
    ],
)
def test_a_relative_a_memory_names_is_asked_of_by_name(question: str, said: str) -> None:
    texts = ("I live in Cardiff with my husband Gareth.", "Our dog is called Rex.")
    assert as_named(question, names_of(people_named(question), who_is_who(texts))) == said


def test_a_name_the_memories_introduce_names_that_relative() -> None:
    """ "Lucia goes to a Montessori nursery" names nobody as someone's, but "Our daughter
    Lucia is 4" says Lucia is the daughter: for a question about the sister it is about
    someone else; for one about the daughter, or a child, it is not."""
    people = who_is_who(["Our daughter Lucia is 4.", "My wife Ana and I live in Valencia."])
    assert people == {"Lucia": frozenset({"daughter"}), "Ana": frozenset({"wife"})}
    text = "Lucia goes to a Montessori nursery."
    assert about_someone_else(people_named("What does my sister do?"), text, people=people)
    assert not about_someone_else(people_named("Where does my daughter go?"), text, people=people)
    assert not about_someone_else(people_named("Where do my kids go?"), text, people=people)
    assert not about_someone_else(people_named("What does my sister do?"), text)


def test_a_relative_given_two_names_is_said_by_neither() -> None:
    texts = ("My friend Sam is a chef.", "My friend Alex is a pilot.")
    named = names_of(people_named("What does my friend do?"), who_is_who(texts))
    assert named == {"friend": frozenset({"Sam", "Alex"})}
    assert as_named("What does my friend do?", named) == "What does my friend do?"


def test_a_name_introduced_as_two_relatives_is_said_as_neither() -> None:
    introduced = introductions(
        names_in_query("What does Sam like?"),
        ["My friend Sam is a chef.", "My boss Sam is strict."],
    )
    assert introduced == {stem("sam"): frozenset({"friend", "boss"})}
    assert as_relatives("What does Sam like?", introduced) == "What does Sam like?"


def test_a_question_about_an_introduced_relative_asks_of_them_alone() -> None:
    """ "What does Emma do for work?", Emma being the daughter, is not answered by "I work
    as an accountant"; with the user in the question it may be."""
    assert others_only("What does Emma do for work?", relatives=True)
    assert not others_only("What does Emma do for work?")
    assert not others_only("Do I drive Emma to work?", relatives=True)


@pytest.mark.parametrize(
    ("question", "mine"),
    [
        ("Which city do I live in?", True),
        ("Where am I from?", True),
        ("What's my salary? Do I get a bonus?", True),
        ("Where does my sister live?", False),
        ("When did I last see my sister?", False),
        ("What did I tell Dana about the budget?", False),
        ("Who visited me last week?", False),
        ("Which city does Caroline live in?", False),
    ],
)
def test_a_question_asks_of_the_user_alone_with_i_and_nobody_else(
    question: str, mine: bool
) -> None:
    assert of_the_user(question) is mine


@pytest.mark.parametrize(
    ("memory", "theirs"),
    [
        ("My sister lives in Toronto.", True),
        ("Our kids play football on Sundays.", True),
        ("I live in Porto with my partner.", False),
        ("My partner and I moved to Porto.", False),
        ("Rex loves the park.", False),
        ("My rent is 900 euros a month.", False),
    ],
)
def test_a_memory_of_the_users_people_without_the_user_is_theirs(memory: str, theirs: bool) -> None:
    assert of_others_alone(memory) is theirs


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("What did Tom say about Lisbon?", {"tom", "lisbon"}),
        ("Which city have both Jean and John visited?", {"jean", "john"}),
        ("What does Marco think of my plan?", {"marco"}),
        ("When is Dr. Smith's appointment?", {"smith"}),
        ("What did Tom say? Did Sarah agree?", {"tom", "sarah"}),
        ("Did Jon and Gina both dance?", {"jon", "gina"}),
        ("Has Mary Jane called?", {"mary", "jane"}),
        ("What's Caroline's identity?", {"caroline"}),
        ("Who is Dr Okafor?", {"okafor"}),
        ("who is Sarah", {"sarah"}),
        ("Write an email to Sarah's manager about the budget", {"sarah"}),
        ("Tell me about my trip in May", set()),
        ("What is my cat's name?", set()),
        ("Wie heißt mein Hund?", set()),
    ],
)
def test_a_querys_names_are_the_capitalised_words_it_asks_about(
    query: str, names: set[str]
) -> None:
    """Whom a question asks about: in one about someone else, every name; in one about
    the user, the subject after its verb ("does *Marco* think of my plan"), a possessor
    ("*Smith's* appointment"), and the names joined to them."""
    assert names_in_query(query) == {stem(n) for n in names}


@pytest.mark.parametrize(
    "query",
    [
        "What did I order from Amazon?",
        "What do I watch on Netflix?",
        "Which Android phone do I have?",
        "What kind of car do I drive, a Toyota?",
        "What instrument am I learning, is it the Piano?",
        "How long have I lived in Colorado?",
        "Does my sister live in California?",
        "What does the user watch on Netflix?",
        "When did I visit Rome?",
        "Analyse Altria and Philip Morris",
        "Book a table at Nobu for Friday",
        "Write a status email to Dana",
    ],
)
def test_a_thing_a_question_about_the_user_names_beside_its_subject_is_not_asked_about(
    query: str,
) -> None:
    """A brand, a place or a product named as an object ("order from *Amazon*") says
    where or how, not whom the question is about: a memory that never names it ("I
    bought a blender online") may still answer. (Nor can the rule tell "Rome" from
    "Lisbon" apart from "Colorado" and "Denver": that takes knowing the world.)"""
    assert names_in_query(query) == frozenset()


def test_a_memory_that_never_named_any_of_a_querys_names_knows_none() -> None:
    docs = [stems_of(t) for t in ("Priya recommended Siam Garden", "I love Japanese food")]
    assert knows_none(names_in_query("What did Sarah recommend?"), docs)
    assert knows_none(names_in_query("Did Priyanka call back?"), docs)
    assert not knows_none(names_in_query("What did Priya recommend?"), docs)
    assert not knows_none(names_in_query("What do I like about Japan?"), docs)  # a word's start
    assert not knows_none(names_in_query("Did Sarah or Priya call?"), docs)  # one is known
    assert not knows_none(names_in_query("What does Ana like?"), docs, {stem("ana")})
    assert not knows_none(names_in_query("what does the user like?"), docs)
