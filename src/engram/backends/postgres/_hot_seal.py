"""What the PostgreSQL hot tier stores as a blob rather than inline.

Stock ``PostgresSaver`` keeps primitive channel values (``None``, str, int, float, bool)
inline, in the ``checkpoints.checkpoint`` JSONB column. Two kinds must not be: every one,
when encrypting (an ``EncryptedSerializer`` never sees an inline value), and a str holding
NUL (PostgreSQL's JSONB cannot hold it). :func:`seal` wraps them in
:class:`~engram.stores.hot.serde.Sealed`, which the saver stores as a blob (:class:`Blobs`
unwraps it, whatever the serializer); checkpoints stored inline read as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata

from engram.errors import MissingDependencyError
from engram.stores.hot.serde import Sealed

try:
    from langgraph.checkpoint.postgres.base import BasePostgresSaver
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

_PRIMITIVES = (str, int, float, bool)


def _inline(value: Any) -> bool:
    """Whether stock ``PostgresSaver`` keeps ``value`` inline, in the checkpoint's JSONB."""
    return value is None or isinstance(value, _PRIMITIVES)


def holds_nul(value: Any) -> bool:
    """A str JSONB cannot hold (PostgreSQL's text has no NUL): it goes to a blob."""
    return isinstance(value, str) and "\x00" in value


def seal(
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
    wanted: Callable[[Any], bool] = _inline,
) -> tuple[Checkpoint, ChannelVersions]:
    """Wrap the inline channel values ``wanted`` picks (by default all: for encryption)
    so the saver stores them as (encrypted) blobs.

    A sealed channel's blob is (re)written under its current version; the
    blob upsert ignores versions already stored.
    """
    if not any(wanted(v) for v in checkpoint["channel_values"].values()):
        return checkpoint, new_versions
    values = dict(checkpoint["channel_values"])
    versions = dict(new_versions)
    for key, value in checkpoint["channel_values"].items():
        version = checkpoint["channel_versions"].get(key)
        if _inline(value) and wanted(value) and version is not None:
            values[key] = Sealed(value)
            versions.setdefault(key, version)
    return {**checkpoint, "channel_values": values}, versions


def sealed_args(
    checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
) -> tuple[Checkpoint, CheckpointMetadata, ChannelVersions]:
    sealed, versions = seal(checkpoint, new_versions)
    return sealed, metadata, versions


class Blobs(BasePostgresSaver):
    """Stores a :class:`Sealed` channel value as the value itself, whatever the serializer
    (a custom one knows nothing of ``Sealed``; engram's unwrap it too)."""

    def _dump_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: dict[str, Any],
        versions: ChannelVersions,
    ) -> list[tuple[str, str, str, str, str, bytes | None]]:
        plain = {k: v.value if isinstance(v, Sealed) else v for k, v in values.items()}
        return super()._dump_blobs(thread_id, checkpoint_ns, plain, versions)
