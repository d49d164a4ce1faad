"""Recall's fast paths give the values of the general ones: tokenising ASCII text,
clamping and combining the scoring signals."""

from __future__ import annotations

import math
import string

from hypothesis import given
from hypothesis import strategies as st

from engram.recall import Weights, combine, combiner
from engram.recall._relevance import STOP_WORDS, _split, _tokens, words


def _general_words(text: str) -> list[str]:
    """:func:`words` by its definition: every NFKC, lower-cased token, its unspaced runs
    cut into pairs."""
    return [w for token in _tokens(text) for w in _split(token, keep_characters=False)]


ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=80)
MIXED = st.text(
    alphabet=st.sampled_from(
        [*string.printable, "é", "ß", "ﬁ", "½", "²", "Ⅻ", "İ", "K", "\u0301", "绿", "ー", "한"]
    ),
    max_size=60,
)


@given(ASCII)
def test_ascii_words_are_the_general_tokens(text: str) -> None:
    assert words(text) == _general_words(text)


@given(MIXED)
def test_words_of_any_text_are_the_general_tokens(text: str) -> None:
    assert words(text) == _general_words(text)


def test_ascii_words_keep_digits_and_underscores_and_drop_punctuation() -> None:
    assert words("Meet_me at 10:30, OK? it's Bob's") == [
        "meet_me", "at", "10", "30", "ok", "it", "s", "bob", "s",
    ]  # fmt: skip
    assert "s" in STOP_WORDS


def test_unspaced_runs_still_become_pairs() -> None:
    assert words("我喜欢喝绿茶 tea") == ["我喜", "喜欢", "欢喝", "喝绿", "绿茶", "tea"]


def _reference_combine(
    weights: Weights, recency: float, importance: float, relevance: float
) -> float:
    def clamp(x: float) -> float:
        return min(1.0, max(0.0, x))

    total = weights.recency + weights.importance + weights.relevance
    parts = (
        weights.recency * clamp(recency),
        weights.importance * clamp(importance),
        weights.relevance * clamp(relevance),
    )
    return sum(parts) / total


SIGNAL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -0.0, 0.0, 1.0, True, False, 1 - 1e-16, 5e-324]),
)
WEIGHT = st.floats(min_value=0.0, max_value=10.0)


@given(WEIGHT, WEIGHT, st.floats(min_value=0.01, max_value=10.0), SIGNAL, SIGNAL, SIGNAL)
def test_combine_is_bit_for_bit_the_weighted_mean_of_clamped_signals(
    w_recency: float, w_importance: float, w_relevance: float, rec: float, imp: float, rel: float
) -> None:
    weights = Weights(w_recency, w_importance, w_relevance)
    got = combine(weights, recency=rec, importance=imp, relevance=rel)
    want = _reference_combine(weights, rec, imp, rel)
    assert got == want or (math.isnan(got) and math.isnan(want))
    assert math.copysign(1.0, got) == math.copysign(1.0, want)


@given(WEIGHT, WEIGHT, st.floats(min_value=0.01, max_value=10.0), SIGNAL, SIGNAL, SIGNAL)
def test_combiner_gives_combine_bit_for_bit(
    w_recency: float, w_importance: float, w_relevance: float, rec: float, imp: float, rel: float
) -> None:
    weights = Weights(w_recency, w_importance, w_relevance)
    got = combiner(weights)(rec, imp, rel)
    want = combine(weights, recency=rec, importance=imp, relevance=rel)
    assert got == want or (math.isnan(got) and math.isnan(want))
    assert math.copysign(1.0, got) == math.copysign(1.0, want)
