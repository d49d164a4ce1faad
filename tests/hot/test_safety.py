"""Safe by default: strict allow-list deserialisation and AES-GCM encryption at rest."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from hot_graphs import cfg, story_graph
from langgraph.graph import END, START, StateGraph

from engram.errors import ConfigError, EncryptionError, UnsafeDeserializationError
from engram.stores.hot import generate_key, open_checkpointer, register_state_types
from engram.stores.hot import serde as _hot_serde

MARKER = "ZEBRA-MARKER-7781"


@dataclass(frozen=True)
class Gadget:
    """A state type nobody registered."""

    name: str


class Holder(TypedDict, total=False):
    items: Annotated[list[Any], operator.add]


def _holder_graph(saver: Any) -> Any:
    builder = StateGraph(Holder)
    builder.add_node("make", lambda s: {"items": [Gadget("g1")]})
    builder.add_edge(START, "make")
    builder.add_edge("make", END)
    return builder.compile(checkpointer=saver)


def test_unregistered_type_fails_to_load_with_a_clear_error(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = _holder_graph(saver)
        graph.invoke({"items": ["start"]}, cfg("t"))
        with pytest.raises(UnsafeDeserializationError, match="Gadget"):
            graph.get_state(cfg("t"))


def test_allowed_types_let_a_trusted_type_load(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hot.db'}"
    with open_checkpointer(url) as saver:
        _holder_graph(saver).invoke({"items": ["start"]}, cfg("t"))
    with open_checkpointer(url, allowed_types=[Gadget]) as saver:
        assert _holder_graph(saver).get_state(cfg("t")).values["items"] == ["start", Gadget("g1")]


def test_registered_state_types_are_allowed_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_hot_serde, "_registered", set())
    url = f"sqlite:///{tmp_path / 'hot.db'}"
    register_state_types(Gadget)
    with open_checkpointer(url) as saver:
        graph = _holder_graph(saver)
        graph.invoke({"items": ["start"]}, cfg("t"))
        assert graph.get_state(cfg("t")).values["items"][-1] == Gadget("g1")


def test_langchain_messages_load_under_the_strict_default(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import MessagesState

    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda s: {"messages": [AIMessage("hello", id="m2")]})
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    with open_checkpointer(f"sqlite:///{tmp_path / 'hot.db'}") as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [HumanMessage("hi", id="m1")]}, cfg("t"))
        messages = graph.get_state(cfg("t")).values["messages"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage"]


def test_pickled_values_are_refused() -> None:
    with pytest.raises(UnsafeDeserializationError, match="pickle"):
        _hot_serde.StrictSerializer().loads_typed(("pickle", b"\x80\x04N."))


def _raw_sqlite_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


def _run_marked_story(url: str, **options: Any) -> None:
    with open_checkpointer(url, **options) as saver:
        story_graph(saver).invoke({"items": [MARKER], "note": MARKER}, cfg("t"))


def test_sqlite_file_holds_plaintext_without_a_key(tmp_path: Path) -> None:
    db = tmp_path / "plain.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        story_graph(saver).invoke({"items": [MARKER], "note": MARKER}, cfg("t"))
        assert MARKER.encode() in _raw_sqlite_bytes(db)


def test_encrypted_sqlite_file_and_wal_hold_no_plaintext(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "enc.db"
    url = f"sqlite:///{db}"
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", generate_key())
    with open_checkpointer(url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": [MARKER], "note": MARKER}, cfg("t"))
        assert Path(f"{db}-wal").exists()
        assert MARKER.encode() not in _raw_sqlite_bytes(db)
        assert graph.get_state(cfg("t")).values["items"] == [MARKER, "a", "b", "c"]
    assert MARKER.encode() not in _raw_sqlite_bytes(db)


def test_encrypted_state_needs_the_right_key(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'enc.db'}"
    _run_marked_story(url, encryption_key=generate_key())
    with open_checkpointer(url) as saver, pytest.raises(EncryptionError, match="encrypted"):
        story_graph(saver).get_state(cfg("t"))
    with (
        open_checkpointer(url, encryption_key=generate_key()) as saver,
        pytest.raises(EncryptionError, match="wrong encryption key"),
    ):
        story_graph(saver).get_state(cfg("t"))


def test_the_key_can_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'enc.db'}"
    key = generate_key()
    _run_marked_story(url, encryption_key=key)
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", key)
    with open_checkpointer(url) as saver:
        assert story_graph(saver).get_state(cfg("t")).values["note"] == "after c"


@pytest.mark.parametrize("bad", ["short", "00" * 15, "not base64 at all!"])
def test_malformed_keys_are_config_errors(bad: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError), open_checkpointer("memory://", encryption_key=bad):
        pass


def _postgres_raw(url: str) -> bytes:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT convert_to(checkpoint::text || metadata::text, 'UTF8') FROM checkpoints"
            " UNION ALL SELECT blob FROM checkpoint_blobs WHERE blob IS NOT NULL"
            " UNION ALL SELECT blob FROM checkpoint_writes"
        ).fetchall()
    return b"".join(bytes(r[0]) for r in rows)


@pytest.mark.postgres
def test_postgres_inlines_plaintext_without_a_key(postgres_url: str) -> None:
    _run_marked_story(postgres_url)
    assert MARKER.encode() in _postgres_raw(postgres_url)


@pytest.mark.postgres
def test_encrypted_postgres_rows_hold_no_plaintext(postgres_url: str) -> None:
    key = generate_key()
    _run_marked_story(postgres_url, encryption_key=key)
    assert MARKER.encode() not in _postgres_raw(postgres_url)
    with open_checkpointer(postgres_url, encryption_key=key) as saver:
        graph = story_graph(saver)
        assert graph.get_state(cfg("t")).values == {
            "items": [MARKER, "a", "b", "c"],
            "note": "after c",
        }
        graph.invoke({"items": ["again"]}, cfg("t"))
        assert graph.get_state(cfg("t")).values["items"][-4:] == ["again", "a", "b", "c"]
    with open_checkpointer(postgres_url) as saver, pytest.raises(EncryptionError):
        story_graph(saver).get_state(cfg("t"))


def test_langgraph_with_allowlist_keeps_engram_strictness(tmp_path: Path) -> None:
    with open_checkpointer(f"sqlite:///{tmp_path / 'hot.db'}") as saver:
        _holder_graph(saver).invoke({"items": ["start"]}, cfg("t"))
        narrowed = saver.with_allowlist([("some.module", "Other")])
        assert isinstance(narrowed.serde, _hot_serde.StrictSerializer)
        with pytest.raises(UnsafeDeserializationError):
            narrowed.get_tuple(cfg("t"))
        widened = saver.with_allowlist([(Gadget.__module__, "Gadget")])
        assert widened.get_tuple(cfg("t")) is not None


@pytest.mark.parametrize("mode", ["exit", "async", "sync"])
def test_durability_modes_are_langgraphs(mode: str, tmp_path: Path) -> None:
    from engram.stores.hot import DURABILITY_MODES, check_durability

    assert check_durability(mode) == mode and mode in DURABILITY_MODES
    with open_checkpointer(f"sqlite:///{tmp_path / 'hot.db'}") as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, cfg("t"), durability=check_durability(mode))
        saved = len(list(graph.get_state_history(cfg("t"))))
    assert saved == (1 if mode == "exit" else 5)


def test_unknown_durability_is_invalid_input() -> None:
    from engram.errors import InvalidInputError
    from engram.stores.hot import check_durability

    with pytest.raises(InvalidInputError, match="durability"):
        check_durability("eventually")


@pytest.mark.parametrize("encrypted", [False, True])
def test_a_str_value_holding_nul_round_trips(hot_url: str, encrypted: bool) -> None:
    """PostgreSQL's JSONB holds no NUL: such a value goes to a blob, as it does encrypted."""
    key = generate_key() if encrypted else None
    with open_checkpointer(hot_url, encryption_key=key) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["a\x00b"], "note": "a\x00b"}, cfg("t"))
        first = list(graph.get_state_history(cfg("t")))[-2]  # the input, before step a
        assert first.values["note"] == "a\x00b"
        assert graph.get_state(cfg("t")).values == {
            "items": ["a\x00b", "a", "b", "c"],
            "note": "after c",
        }
        graph.update_state(cfg("t"), {"note": "\x00"})
        assert graph.get_state(cfg("t")).values["note"] == "\x00"
        history = list(graph.get_state_history(cfg("t")))
        assert [s.values.get("note") for s in history][:2] == ["\x00", "after c"]
