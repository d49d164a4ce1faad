"""Safe checkpoint serialisation: a strict allow-list and optional AES-GCM encryption.

Both build on LangGraph's own pieces: :class:`StrictSerializer` is a
``JsonPlusSerializer`` with an explicit ``allowed_msgpack_modules`` list (so
``saver.with_allowlist(...)`` keeps working), and encryption plugs an AES-GCM
cipher into LangGraph's ``EncryptedSerializer``.

LangGraph's strict mode does not fail on a blocked type: it returns the raw
payload and emits a ``msgpack_blocked`` serde event. :class:`StrictSerializer`
listens for that event during its own ``loads_typed`` call and raises
:class:`~engram.errors.UnsafeDeserializationError` instead, so a checkpoint
holding an unregistered type never loads half-decoded.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_TYPES
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from engram.errors import ConfigError, EncryptionError, SerializationError
from engram.errors import UnsafeDeserializationError as UnsafeError

ENCRYPTION_KEY_ENV = "ENGRAM_ENCRYPTION_KEY"
"""Environment variable holding the AES key (base64 or hex of 16, 24 or 32 bytes)."""

CIPHER_NAME = "aesgcm"
_NONCE_BYTES = 12
_KEY_SIZES = (16, 24, 32)
_BLOCKED_KINDS = frozenset({"msgpack_blocked", "msgpack_method_blocked"})

TypeKey = tuple[str, ...]

ENGRAM_STATE_TYPES: frozenset[TypeKey] = frozenset({("engram._principal", "Principal")})
"""engram's own types that may appear in graph state."""

DEFAULT_ALLOWED_TYPES: frozenset[TypeKey] = SAFE_MSGPACK_TYPES | ENGRAM_STATE_TYPES
"""LangGraph's safe list (datetimes, UUIDs, LangChain messages, Send...) plus engram's."""

_registered: set[TypeKey] = set()
_registered_lock = threading.Lock()


def type_key(item: type | TypeKey) -> TypeKey:
    """``(module, name)`` of a class, or the tuple unchanged."""
    if isinstance(item, type):
        return (item.__module__, item.__name__)
    return tuple(item)


def register_state_types(*types: type | TypeKey) -> None:
    """Allow ``types`` in every strict serializer built afterwards.

    For an application's own state classes (dataclasses, pydantic models,
    enums): register them once at start-up, before opening a checkpointer.
    """
    with _registered_lock:
        _registered.update(type_key(t) for t in types)


def allowed_types(extra: Iterable[type | TypeKey] = ()) -> frozenset[TypeKey]:
    """The allow-list a new serializer gets: defaults, registered types and ``extra``."""
    with _registered_lock:
        registered = frozenset(_registered)
    return DEFAULT_ALLOWED_TYPES | registered | {type_key(t) for t in extra}


# --- strict deserialisation ---------------------------------------------------

_blocked: ContextVar[list[str] | None] = ContextVar("engram_serde_blocked", default=None)
_listening = False
_listen_lock = threading.Lock()


def _record_blocked(event: SerdeEvent) -> None:
    seen = _blocked.get()
    if seen is not None and event["kind"] in _BLOCKED_KINDS:
        seen.append(".".join(filter(None, (event["module"], event["name"], event.get("method")))))


def _listen() -> None:
    """Subscribe to LangGraph's serde events once (on first load, not at import)."""
    global _listening
    with _listen_lock:
        if not _listening:
            register_serde_event_listener(_record_blocked)
            _listening = True


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's msgpack serializer restricted to an allow-list, failing loudly.

    No pickle, no JSON constructors outside LangGraph's safe list, and a load
    that meets a type outside the allow-list raises
    :class:`~engram.errors.UnsafeDeserializationError` naming the type.
    """

    def __init__(self, allowed: Iterable[type | TypeKey] = ()) -> None:
        super().__init__(
            pickle_fallback=False,
            allowed_json_modules=None,
            allowed_msgpack_modules=tuple(allowed_types(allowed)),
        )

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if isinstance(obj, Sealed):
            obj = obj.value
        return super().dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind = data[0]
        if "+" in kind:
            raise EncryptionError(
                f"this checkpoint is encrypted ({kind.split('+', 1)[1]}); "
                f"set {ENCRYPTION_KEY_ENV} to the key it was written with"
            )
        if kind == "pickle":
            raise UnsafeError("refusing a pickled checkpoint value (pickle can run any code)")
        _listen()
        token = _blocked.set([])
        try:
            value = super().loads_typed(data)
            blocked = _blocked.get() or []
        except NotImplementedError as exc:
            raise SerializationError(f"unknown checkpoint encoding {kind!r}") from exc
        finally:
            _blocked.reset(token)
        if blocked:
            raise UnsafeError(_blocked_message(blocked))
        return value


def _blocked_message(blocked: list[str]) -> str:
    names = ", ".join(sorted(set(blocked)))
    return (
        f"checkpoint holds type(s) not on the allow-list: {names}. If you trust them, "
        "allow them with engram.stores.hot.register_state_types(...) or "
        "open_checkpointer(url, allowed_types=[...])"
    )


@dataclass(frozen=True, slots=True)
class Sealed:
    """A channel value forced through the serializer (see the PostgreSQL saver)."""

    value: Any


# --- encryption -------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class AesGcmCipher:
    """LangGraph ``CipherProtocol`` with AES-GCM: a fresh 96-bit nonce per value."""

    key: bytes

    def __post_init__(self) -> None:
        if len(self.key) not in _KEY_SIZES:
            raise ConfigError(f"an AES key has 16, 24 or 32 bytes, not {len(self.key)}")

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        nonce = os.urandom(_NONCE_BYTES)
        return CIPHER_NAME, nonce + AESGCM(self.key).encrypt(nonce, plaintext, None)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != CIPHER_NAME:
            raise EncryptionError(f"unknown cipher {ciphername!r} (engram writes {CIPHER_NAME})")
        nonce, body = ciphertext[:_NONCE_BYTES], ciphertext[_NONCE_BYTES:]
        try:
            return AESGCM(self.key).decrypt(nonce, body, None)
        except InvalidTag as exc:
            raise EncryptionError(
                "cannot decrypt checkpoint: wrong encryption key or tampered data"
            ) from exc


def generate_key() -> str:
    """A new random 256-bit key, base64-encoded, for ``ENGRAM_ENCRYPTION_KEY``."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode("ascii")


def parse_key(value: str | bytes) -> bytes:
    """Decode a key given as raw bytes, base64 or hex; raise :class:`ConfigError`."""
    if isinstance(value, bytes):
        return AesGcmCipher(value).key
    text = value.strip()
    for decode in (_from_hex, _from_base64):
        raw = decode(text)
        if raw is not None and len(raw) in _KEY_SIZES:
            return raw
    raise ConfigError(f"{ENCRYPTION_KEY_ENV} must be base64 or hex of 16, 24 or 32 bytes")


def _from_hex(text: str) -> bytes | None:
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _from_base64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def key_from_env(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The key in ``ENGRAM_ENCRYPTION_KEY``, or ``None`` when it is unset or empty."""
    raw = (os.environ if environ is None else environ).get(ENCRYPTION_KEY_ENV, "")
    return parse_key(raw) if raw.strip() else None


def build_serde(
    *, allowed: Iterable[type | TypeKey] = (), key: bytes | None = None
) -> SerializerProtocol:
    """A strict serializer, wrapped in LangGraph's ``EncryptedSerializer`` when ``key`` is set."""
    strict = StrictSerializer(allowed)
    if key is None:
        return strict
    return EncryptedSerializer(AesGcmCipher(key), strict)
