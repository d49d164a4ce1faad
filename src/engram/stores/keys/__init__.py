"""API keys: who each key is bound to, its scopes, expiry and keyed hash.

:func:`open_keys` opens the store of a home (SQLite, in the same database file as the
cold tier) or of a PostgreSQL URL (row-level security on the tenant, as every other
table). Minting and verifying tokens is the server's part (:mod:`engram.server.keys`).
"""

from engram.stores.keys._open import KeyErasure, home_keys, open_keys, url_keys
from engram.stores.keys.contract import KeyRecord, KeyStore

__all__ = ["KeyErasure", "KeyRecord", "KeyStore", "home_keys", "open_keys", "url_keys"]
