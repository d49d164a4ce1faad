"""Session/neighbour/speaker re-ranking on hand-made candidates."""

from __future__ import annotations

from engram.eval._rerank import Candidate, RerankWeights, named_speaker, rerank


def _c(id_: str, rel: float, session: str, pos: int, speaker: str = "Ann") -> Candidate:
    return Candidate(id_, rel, session, pos, speaker)


def test_named_speaker_needs_exactly_one_whole_name() -> None:
    assert named_speaker("When did Ann move?", ["Ann", "Bob"]) == "Ann"
    assert named_speaker("Did Ann meet Bob?", ["Ann", "Bob"]) is None
    assert named_speaker("What did Annie say?", ["Ann", "Bob"]) is None


def test_without_boosts_the_order_is_relevance() -> None:
    cands = [_c("a", 0.9, "S1", 0), _c("b", 0.5, "S2", 7), _c("c", 0.4, "S3", 3)]
    assert rerank("q", cands, RerankWeights(0, 0, 0)) == ["a", "b", "c"]


def test_a_neighbour_of_a_strong_match_climbs() -> None:
    cands = [_c("hit", 0.9, "S1", 4), _c("far", 0.5, "S2", 9), _c("next", 0.45, "S1", 5)]
    assert rerank("q", cands, RerankWeights(0, 0.3, 0)) == ["hit", "next", "far"]
    other_session = [_c("hit", 0.9, "S1", 4), _c("far", 0.5, "S2", 9), _c("x", 0.45, "S3", 5)]
    assert rerank("q", other_session, RerankWeights(0, 0.3, 0)) == ["hit", "far", "x"]


def test_session_and_speaker_boosts() -> None:
    cands = [_c("s1", 0.5, "S1", 0), _c("s2", 0.45, "S2", 0), _c("s2b", 0.9, "S2", 9)]
    assert rerank("q", cands, RerankWeights(0, 0, 0.5))[:2] == ["s2b", "s2"]
    bob = [_c("ann", 0.5, "S1", 0, "Ann"), _c("bob", 0.4, "S2", 0, "Bob")]
    assert rerank("What does Bob like?", bob, RerankWeights(0.5, 0, 0)) == ["bob", "ann"]
    assert rerank("What do they like?", bob, RerankWeights(0.5, 0, 0)) == ["ann", "bob"]
