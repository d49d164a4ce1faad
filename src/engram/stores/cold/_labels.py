"""LangGraph's ``BaseStore`` methods with engram's namespace rules.

LangGraph refuses a ``.`` in a label (its own stores join labels with dots); engram joins
them with a control character no label may hold, so a ``.`` is a plain character and a
user such as ``alice.smith`` is reachable through every method. Every other rule holds on
every path, ``batch`` included: labels are non-empty text without control characters,
and ``langgraph`` is LangGraph's root, not a tenant.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    Item,
    NotProvided,
    PutOp,
    SearchItem,
    SearchOp,
)

from engram.errors import InvalidInputError
from engram.stores.cold import _pipeline as pipe


class EngramLabels(BaseStore):
    """``get`` / ``search`` / ``put`` / ``delete`` and their async twins, checked by
    :func:`~engram.stores.cold._pipeline.check_op` in ``batch`` instead of LangGraph's
    label rule."""

    def _refresh_default(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        op = GetOp(pipe.namespace_of(namespace), key, self._refresh_default(refresh_ttl))
        result = self.batch([op])[0]
        return result if isinstance(result, Item) else None

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        prefix = pipe.namespace_of(namespace_prefix) if namespace_prefix else ()
        refresh = self._refresh_default(refresh_ttl)
        result = self.batch([SearchOp(prefix, filter, limit, offset, query, refresh)])[0]
        found = result if isinstance(result, list) else []
        return [item for item in found if isinstance(item, SearchItem)]

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        if ttl is NOT_PROVIDED:
            ttl = (self.ttl_config or {}).get("default_ttl")
        minutes = None if isinstance(ttl, NotProvided) else ttl
        op = PutOp(_writable(namespace), key, dict(value), index=index, ttl=minutes)
        self.batch([op])

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        self.batch([PutOp(pipe.namespace_of(namespace), key, None, ttl=None)])

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        return await asyncio.to_thread(self.get, namespace, key, refresh_ttl=refresh_ttl)

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        return await asyncio.to_thread(
            lambda: self.search(
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        )

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        await asyncio.to_thread(self.put, namespace, key, value, index, ttl=ttl)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        await asyncio.to_thread(self.delete, namespace, key)


def _writable(namespace: tuple[str, ...]) -> tuple[str, ...]:
    found = pipe.namespace_of(namespace)
    if found[0] == "langgraph":
        raise InvalidInputError(f"the root label 'langgraph' is LangGraph's own: {found!r}")
    return found
