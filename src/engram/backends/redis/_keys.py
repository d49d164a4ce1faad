"""Key layout, record encoding and Lua scripts of the Redis hot tier (pure: no I/O).

Every key of one thread carries the thread as its hash tag, so a thread's keys would
share one cluster slot::

    engram:hot:{<thread>}:keys               SET   every other key of the thread
    engram:hot:{<thread>}:ns                 SET   the thread's namespaces
    engram:hot:{<thread>}:z:<ns>             ZSET  checkpoint ids of a namespace (score 0, by id)
    engram:hot:{<thread>}:c:<ns>:<id>        HASH  one checkpoint and its pending writes
    engram:hot:{<thread>}:owner              HASH  tenant, user (fixed at the first scoped write)
    engram:hot:threads                       SET   every thread id
    engram:hot:u:<tenant>:<user>             SET   the thread ids one principal owns

``<thread>``, ``<ns>``, ``<tenant>`` and ``<user>`` are percent-encoded (no ``{``, ``}``
or ``:`` is left in them); a checkpoint id is stored as it is, last in its key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, unquote

from langgraph.checkpoint.base import PendingWrite, writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from engram._principal import Principal

PREFIX: Final = "engram:hot:"
THREADS: Final = PREFIX + "threads"

TYPE, CHECKPOINT, METATYPE, METADATA, PARENT = (
    b"type",
    b"checkpoint",
    b"metatype",
    b"metadata",
    b"parent",
)
CHECKPOINT_FIELDS: Final = (TYPE, CHECKPOINT, METATYPE, METADATA, PARENT)
WRITE_PREFIX: Final = b"w:"


def encode(text: str) -> str:
    """Percent-encode ``text`` for a key part (injective; surrogates kept)."""
    return quote(text, safe="", errors="surrogatepass")


def decode(part: bytes | str) -> str:
    text = part.decode() if isinstance(part, bytes) else part
    return unquote(text, errors="surrogatepass")


def text_of(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


@dataclass(frozen=True, slots=True)
class ThreadKeys:
    """The keys of one thread."""

    thread_id: str

    @property
    def base(self) -> str:
        return f"{PREFIX}{{{encode(self.thread_id)}}}"

    @property
    def keys(self) -> str:
        return self.base + ":keys"

    @property
    def namespaces(self) -> str:
        return self.base + ":ns"

    @property
    def owner(self) -> str:
        return self.base + ":owner"

    def ids(self, ns: str) -> str:
        return f"{self.base}:z:{encode(ns)}"

    def checkpoint(self, ns: str, checkpoint_id: str) -> str:
        return f"{self.base}:c:{encode(ns)}:{checkpoint_id}"


def user_index(owner: Principal) -> str:
    return f"{PREFIX}u:{encode(owner.tenant_id)}:{encode(owner.user_id)}"


# --- records ------------------------------------------------------------------------


def write_field(task_id: str, idx: int) -> bytes:
    return WRITE_PREFIX + f"{encode(task_id)}:{idx}".encode()


def pack_write(task_path: str, channel: str, typed: tuple[str, bytes]) -> bytes:
    """One pending write: a JSON header line (task path, channel, type), then the value."""
    header = json.dumps([task_path, channel, typed[0]], ensure_ascii=True).encode()
    return header + b"\n" + typed[1]


def unpack_writes(record: dict[bytes, bytes], serde: SerializerProtocol) -> list[PendingWrite]:
    """The pending writes of a checkpoint record, in LangGraph's ``writes_sort_key`` order."""
    found: list[tuple[tuple[str, str, int], PendingWrite]] = []
    for field, value in record.items():
        if not field.startswith(WRITE_PREFIX):
            continue
        task, idx = field[len(WRITE_PREFIX) :].decode().rsplit(":", 1)
        header, blob = value.split(b"\n", 1)
        task_path, channel, kind = json.loads(header)
        task_id = decode(task)
        write = (task_id, channel, serde.loads_typed((kind, blob)))
        found.append((writes_sort_key(task_path, task_id, int(idx)), write))
    return [w for _, w in sorted(found, key=lambda pair: pair[0])]


def count_writes(record: dict[bytes, Any]) -> tuple[int, int]:
    """How many pending writes a record holds, and their value bytes."""
    values = [v for f, v in record.items() if f.startswith(WRITE_PREFIX)]
    return len(values), sum(len(v) - v.index(b"\n") - 1 for v in values)


# --- Lua ------------------------------------------------------------------------------

# ARGV: owner key, tenant, user, user index key, thread id, threads key, ttl (0: none),
# a key that must exist for the claim to be made ('': none).
# A user index lives as long as the longest-lived thread in it (no TTL: for good).
CLAIM_LUA = """
local owner, index, ttl, needed = ARGV[1], ARGV[4], tonumber(ARGV[7]), ARGV[8]
if redis.call('EXISTS', owner) == 0
    and (needed == '' or redis.call('EXISTS', needed) == 1) then
  redis.call('HSET', owner, 'tenant', ARGV[2], 'user', ARGV[3], 'index', index)
  redis.call('SADD', index, ARGV[5])
  redis.call('SADD', ARGV[6], ARGV[5])
  if ttl > 0 then
    redis.call('EXPIRE', owner, ttl)
    local left = redis.call('TTL', index)
    if (left == -1 and redis.call('SCARD', index) == 1) or (left >= 0 and left < ttl) then
      redis.call('EXPIRE', index, ttl)
    end
  else
    redis.call('PERSIST', index)
  end
end
return redis.call('HMGET', owner, 'tenant', 'user')
"""

# ARGV: thread base, thread id, threads key. Deletes every key of the thread.
DROP_LUA = """
local base = ARGV[1]
local keys = redis.call('SMEMBERS', base .. ':keys')
for i = 1, #keys, 500 do
  redis.call('DEL', unpack(keys, i, math.min(i + 499, #keys)))
end
local index = redis.call('HGET', base .. ':owner', 'index')
if index then redis.call('SREM', index, ARGV[2]) end
redis.call('DEL', base .. ':keys', base .. ':owner')
redis.call('SREM', ARGV[3], ARGV[2])
return #keys
"""

# ARGV: thread base, ttl. Every key of the thread expires ttl seconds from now.
TOUCH_LUA = """
local base = ARGV[1]
for _, key in ipairs(redis.call('SMEMBERS', base .. ':keys')) do
  redis.call('EXPIRE', key, ARGV[2])
end
redis.call('EXPIRE', base .. ':keys', ARGV[2])
redis.call('EXPIRE', base .. ':owner', ARGV[2])
local index = redis.call('HGET', base .. ':owner', 'index')
if index then
  local left = redis.call('TTL', index)
  if left >= 0 and left < tonumber(ARGV[2]) then redis.call('EXPIRE', index, ARGV[2]) end
end
return 1
"""

# KEYS: a checkpoint record. Makes it a root unless it is gone (not to recreate it).
REPARENT_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HSET', KEYS[1], 'parent', '')
end
return 0
"""

SCRIPTS: Final = {"claim": CLAIM_LUA, "drop": DROP_LUA, "touch": TOUCH_LUA}
