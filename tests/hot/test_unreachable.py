"""An unreachable PostgreSQL server for the hot tier is one typed ``BackendError`` (sync,
async and on the command line), as for the other tiers: never a driver traceback."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from engram import BackendError
from engram.cli import main
from engram.stores.hot import aopen_checkpointer, open_checkpointer

pytest.importorskip("psycopg")


@pytest.fixture
def closed_url() -> str:
    """A PostgreSQL URL on a local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://engram:pw@127.0.0.1:{port}/engram?connect_timeout=5"


def test_opening_the_hot_tier_on_a_closed_port_is_a_backend_error(closed_url: str) -> None:
    with pytest.raises(BackendError, match="PostgreSQL hot tier unavailable"):  # noqa: SIM117
        with open_checkpointer(closed_url):
            pytest.fail("opened a saver on a closed port")


async def test_the_async_hot_tier_on_a_closed_port_is_a_backend_error(closed_url: str) -> None:
    with pytest.raises(BackendError, match="PostgreSQL hot tier unavailable"):
        async with aopen_checkpointer(closed_url):
            pytest.fail("opened a saver on a closed port")


@pytest.mark.parametrize(
    "args",
    [["threads", "list-threads", "--url"], ["agent", "status", "t1", "--hot-url"]],
    ids=["threads", "agent"],
)
def test_the_cli_says_so_in_one_line(closed_url: str, args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, closed_url])
    assert result.exit_code == 1
    assert result.output.startswith("Error: BackendError: PostgreSQL hot tier unavailable: ")
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
