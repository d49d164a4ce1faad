"""Search queries of tens of thousands of words, of stop words and of words too long to
index: every backend answers (PostgreSQL's ``to_tsquery`` once ran out of stack on 25,000
words) and finds what the query's first ordinary words name."""

from __future__ import annotations

import itertools
import string

from engram import Principal
from engram.recall import MAX_SEARCH_TERMS
from engram.recall._relevance import STOP_WORDS
from engram.stores.documents import DocumentStore
from engram.stores.documents.markdown import fts_query, words

ALICE = Principal("acme", "alice")
FOUR_LETTERS = ["".join(t) for t in itertools.product(string.ascii_lowercase, repeat=4)]


def _paths(store: DocumentStore, query: str) -> list[str]:
    return [hit.path for hit in store.search(ALICE, query, k=3, mode="keyword")]


def test_tens_of_thousands_of_distinct_words(store: DocumentStore) -> None:
    store.write_text(ALICE, "research/x.md", "# X\n\nhello world\n")
    query = "hello " + " ".join(FOUR_LETTERS[:60_000])
    assert _paths(store, query) == ["research/x.md"]
    cjk = " ".join(chr(c) for c in range(0x4E00, 0x4E00 + 20_000))
    assert _paths(store, "world " + cjk) == ["research/x.md"]


def test_stop_words_do_not_crowd_out_the_words_that_matter(store: DocumentStore) -> None:
    store.write_text(ALICE, "research/x.md", "# X\n\nhello world\n")
    stops = " ".join(sorted(STOP_WORDS))
    assert len(STOP_WORDS) > MAX_SEARCH_TERMS
    assert _paths(store, f"{stops} {stops.upper()} hello") == ["research/x.md"]


def test_a_word_too_long_to_index(store: DocumentStore) -> None:
    store.write_text(ALICE, "research/x.md", "# X\n\nhello world\n")
    assert _paths(store, "a" * 90_000 + " hello") == ["research/x.md"]
    assert _paths(store, "é" * 1_100 + " world") == ["research/x.md"]


def test_words_past_the_first_hundred_thousand_characters_are_not_searched(
    store: DocumentStore,
) -> None:
    store.write_text(ALICE, "research/x.md", "# X\n\nhello world\n")
    assert _paths(store, "a" * 3_000_000 + " hello") == []
    assert _paths(store, "world " + "a" * 3_000_000) == ["research/x.md"]


def test_the_words_sent_are_the_first_content_words() -> None:
    query = "The tea and THE Tea of " + " ".join(FOUR_LETTERS[:100])
    sent = words(query)
    assert len(sent) == MAX_SEARCH_TERMS
    assert sent[:3] == ["tea", "aaaa", "aaab"]  # (case-blind: "Tea" is "tea")
    assert "The" not in sent and "and" not in sent
    assert words("the and of") == ["the", "and", "of"]  # (only stop words: all of them)
    assert fts_query(query).count(" OR ") == MAX_SEARCH_TERMS - 1
