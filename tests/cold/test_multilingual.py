"""Facts in every script pass the write policy and are found by keyword, on every backend.

Keyword recall alone (no embedder): the facts share no Latin words, so only the
backends' full-text indexes can find them. Chinese and Japanese are written without
spaces; a query word must still find the sentence that holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from engram import Principal
from engram.policy import WritePolicy
from engram.stores.cold import LongTermStore

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import StoreFactory

ME = Principal("t", "me")

FACTS = {
    "ru_city": "Я живу в Казани и работаю врачом",
    "ru_dog": "Моя собака боится грозы",
    "zh_tea": "我喜欢喝绿茶",
    "zh_daughter": "我的女儿在上海读大学",
    "ar_city": "أعيش في القاهرة مع عائلتي",
    "ar_coffee": "أفضل القهوة بدون سكر",
    "hi_tea": "मुझे हरी चाय पसंद है",
    "hi_walk": "मैं रोज़ सुबह चलता हूँ",
    "ja_coffee": "私は毎朝コーヒーを飲みます",
    "ko_city": "저는 부산에 살아요",
    "en_tea": "I drink green tea every afternoon",
}

QUERIES = [
    ("Казани", "ru_city"),
    ("собака", "ru_dog"),
    ("绿茶", "zh_tea"),
    ("上海", "zh_daughter"),
    ("女儿在哪里上大学", "zh_daughter"),
    ("茶", "zh_tea"),
    ("القهوة", "ar_coffee"),
    ("القاهرة", "ar_city"),
    ("चाय", "hi_tea"),
    ("सुबह", "hi_walk"),
    ("コーヒー", "ja_coffee"),
    ("부산", "ko_city"),
    ("green tea", "en_tea"),
]


@pytest.fixture
def stored(make_store: StoreFactory) -> LongTermStore:
    store = make_store(embedder=None, policy=WritePolicy())
    for key, text in FACTS.items():
        result = store.remember(ME, text, key=key, tags=["fact"])
        assert result.action == "added", (key, result.reason)
    return store


@pytest.mark.parametrize(("query", "expected"), QUERIES, ids=[q for q, _ in QUERIES])
def test_keyword_recall_finds_the_fact_in_its_script(
    stored: LongTermStore, query: str, expected: str
) -> None:
    found = [r.record.key for r in stored.recall(ME, query, k=5)]
    assert found[:1] == [expected]


@pytest.mark.parametrize("query", ["绿茶", "चाय", "Казани", "القهوة"], ids=["zh", "hi", "ru", "ar"])
def test_keyword_recall_finds_only_facts_holding_the_word(
    stored: LongTermStore, query: str
) -> None:
    found = [r.record.key for r in stored.recall(ME, query, k=10)]
    assert len(found) == 1, found


def test_erasing_a_cjk_fact_leaves_no_keyword_match(stored: LongTermStore) -> None:
    stored.forget(ME, keys=["zh_tea"])
    assert [r.record.key for r in stored.recall(ME, "绿茶", k=5)] == []
    assert [r.record.key for r in stored.recall(ME, "上海", k=5)] == ["zh_daughter"]
