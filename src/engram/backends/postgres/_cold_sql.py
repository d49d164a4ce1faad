"""SQL of the PostgreSQL cold backend: schema migrations, statements and pure builders.

No I/O here. Every builder returns ``(sql, params)`` with ``%s`` placeholders.
Values that PostgreSQL must see as literals for an index to apply (the vector
dimension in the HNSW expression index and its partial predicate) are integers
formatted into the SQL, never strings.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.backends.postgres._roles import tenant_policy
from engram.errors import InvalidInputError
from engram.recall import MAX_SEARCH_TERMS
from engram.recall.filters import Fragment, Kind, Scalar, compile_filter
from engram.stores.cold.contract import Scan, Vector
from engram.stores.cold.records import NAMESPACE_SEPARATOR, Namespace, View, join_namespace

TABLE = "engram_cold_memories"
VERSION_TABLE_NAME = "engram_cold_migrations"
SWEEP_FUNCTION = "engram_cold_sweep(timestamptz)"
HNSW_FUNCTION = "engram_cold_hnsw(integer)"
ERASED_FUNCTION = "engram_cold_erased()"
ERASURES_FUNCTION = "engram_cold_erasures()"
TS_CONFIG = "simple"
"""No stemming, no stop words: the same words match as in the memory and SQLite backends."""

BACKFILL_KEYWORDS = "-- engram: backfill kw"
"""A migration step run by the client, not the server: fill ``kw`` of existing rows."""
KEYWORD_ROWS = f"SELECT tenant, id, text FROM {TABLE} WHERE kw IS NULL AND text <> ''"
REKEY_KEYWORDS = "-- engram: rewrite kw"
"""A migration step run by the client: write ``kw`` of every row again (the shared
tokenisation changed)."""
EVERY_KEYWORD_ROW = f"SELECT tenant, id, text FROM {TABLE} WHERE text <> ''"
NEW_KEYWORDS = "engram_cold_new_kw"
"""A migration's temporary table of rewritten keywords, applied by one ``UPDATE``."""
CREATE_NEW_KEYWORDS = f"CREATE TEMP TABLE {NEW_KEYWORDS} (tenant text, id text, kw text)"
COPY_NEW_KEYWORDS = f"COPY {NEW_KEYWORDS} (tenant, id, kw) FROM STDIN"
CHANGED_KEYWORD = (
    f"SELECT 1 FROM {TABLE} t JOIN {NEW_KEYWORDS} n ON t.tenant = n.tenant AND t.id = n.id "
    "WHERE t.kw IS DISTINCT FROM n.kw LIMIT 1"
)
"""Whether any row's keywords change (none: the indexes are left as they are)."""
APPLY_NEW_KEYWORDS = (
    f"UPDATE {TABLE} t SET kw = n.kw FROM {NEW_KEYWORDS} n "
    "WHERE t.tenant = n.tenant AND t.id = n.id AND t.kw IS DISTINCT FROM n.kw"
)

REBUILT_INDEXES = f"""SELECT i.relname, pg_get_indexdef(i.oid)
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    WHERE x.indrelid = '{TABLE}'::regclass AND NOT x.indisprimary
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
    ORDER BY i.relname"""
"""The indexes a keyword migration drops and builds again from their definitions (all
but the primary key, which the ``UPDATE`` joins on): building the vector index anew
costs less than maintaining it through a rewrite of every row."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"""CREATE TABLE {TABLE} (
            tenant text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            ns text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            value jsonb NOT NULL,
            text text NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (
                to_tsvector('{TS_CONFIG}'::regconfig, regexp_replace(text, '\\W+', ' ', 'g'))
            ) STORED,
            tags text[] NOT NULL,
            source text NOT NULL,
            sensitivity text NOT NULL,
            importance double precision NOT NULL,
            created_at timestamptz NOT NULL,
            recorded_at timestamptz NOT NULL,
            valid_from timestamptz NOT NULL,
            valid_to timestamptz,
            expires_at timestamptz,
            ttl_s double precision,
            provenance jsonb NOT NULL,
            superseded_by text COLLATE "C",
            model text,
            embedding vector,
            dims integer GENERATED ALWAYS AS (vector_dims(embedding)) STORED,
            PRIMARY KEY (tenant, id)
        )""",
        f"CREATE INDEX {TABLE}_ns_key ON {TABLE} (tenant, ns, key)",
        f"CREATE UNIQUE INDEX {TABLE}_head ON {TABLE} (tenant, ns, key) "
        "WHERE superseded_by IS NULL",
        f"CREATE INDEX {TABLE}_id ON {TABLE} (id)",
        f"CREATE INDEX {TABLE}_expires ON {TABLE} (expires_at) WHERE expires_at IS NOT NULL",
        f"CREATE INDEX {TABLE}_tsv ON {TABLE} USING gin (tsv)",
    ),
    (
        # Tag lookups (``tags && ARRAY[...]``, the profile read on every recall)
        # by a bitmap index scan instead of a scan of the tenant's rows.
        f"CREATE INDEX IF NOT EXISTS {TABLE}_tags ON {TABLE} USING gin (tags)",
    ),
    (
        # GIN's pending list (``fastupdate``) holds new entries unsorted until a
        # vacuum or 4 MB: every keyword search scans it, and the planner, costing
        # that scan, falls back to a sequential scan of the table (10k items just
        # loaded: 11 ms instead of 0.9 ms). Entries go straight into the tree instead.
        f"ALTER INDEX {TABLE}_tsv SET (fastupdate = off)",
        f"ALTER INDEX {TABLE}_tags SET (fastupdate = off)",
        f"SELECT gin_clean_pending_list('{TABLE}_tsv'::regclass)",
        f"SELECT gin_clean_pending_list('{TABLE}_tags'::regclass)",
        # A row with a 384-d vector (1.5 kB) and a sentence is just over 2 kB, where
        # PostgreSQL moves the vector out of line: every distance the search returns,
        # and every exact search, then reads the TOAST table. Keep rows up to a page
        # inline (rows written from now on; larger values still go to TOAST first).
        f"ALTER TABLE {TABLE} SET (toast_tuple_target = 8160)",
    ),
    (
        # Keywords in every script, whatever the database's locale: the client
        # writes the shared tokenisation (``keyword_text``: lower-cased words,
        # unspaced scripts cut into character pairs) into ``kw``, and ``tsv`` is
        # built from it. The old ``regexp_replace(text, '\W+', ...)`` erased every
        # non-ASCII letter in a database whose ctype is C, and kept Chinese
        # sentences as one word.
        f"ALTER TABLE {TABLE} ADD COLUMN kw text",
        BACKFILL_KEYWORDS,
        f"ALTER TABLE {TABLE} DROP COLUMN tsv",
        f"ALTER TABLE {TABLE} ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
        f"(to_tsvector('{TS_CONFIG}'::regconfig, coalesce(kw, ''))) STORED",
        f"CREATE INDEX {TABLE}_tsv ON {TABLE} USING gin (tsv) WITH (fastupdate = off)",
    ),
    (
        # Row-level security: the application role sees and writes only the rows of the
        # tenant its transaction names, whatever a statement's WHERE clause says.
        *tenant_policy(TABLE, "tenant"),
        # The two things the application role does across tenants, each through a
        # function that runs as the schema owner and does only that: delete expired
        # versions (a count comes back, nothing else), and create the HNSW index of a
        # new vector dimension (creating an index needs the table's owner). FORCE applies
        # to the owner as well: the sweep reaches every tenant when the owner is a
        # superuser or has BYPASSRLS.
        f"""CREATE OR REPLACE FUNCTION engram_cold_sweep(moment timestamptz) RETURNS bigint
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            WITH gone AS (DELETE FROM public.{TABLE} WHERE expires_at <= moment RETURNING 1)
            SELECT count(*) FROM gone $$""",
        f"""CREATE OR REPLACE FUNCTION engram_cold_hnsw(dims integer) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
            BEGIN
                IF dims IS NULL OR dims < 1 OR dims > 16000 THEN
                    RAISE EXCEPTION 'vector dimension must be in 1..16000, got %', dims;
                END IF;
                EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON public.{TABLE} '
                    'USING hnsw ((embedding::vector(%s)) vector_cosine_ops) WHERE dims = %s',
                    '{TABLE}_hnsw_' || dims, dims, dims);
            END $$""",
        f"REVOKE ALL ON FUNCTION {SWEEP_FUNCTION}, {HNSW_FUNCTION} FROM PUBLIC",
    ),
    (
        # Committed erasures, counted across tenants (a count, no tenant's data): every
        # process reads it before a recall and drops its caches when it moved. The
        # application role only runs the two functions; the sequence stays the owner's.
        "CREATE SEQUENCE IF NOT EXISTS engram_cold_erasure_seq",
        f"""CREATE OR REPLACE FUNCTION {ERASED_FUNCTION} RETURNS bigint
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            SELECT nextval('public.engram_cold_erasure_seq') $$""",
        f"""CREATE OR REPLACE FUNCTION {ERASURES_FUNCTION} RETURNS bigint
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            SELECT CASE WHEN is_called THEN last_value ELSE 0 END
            FROM public.engram_cold_erasure_seq $$""",
        f"REVOKE ALL ON FUNCTION {ERASED_FUNCTION}, {ERASURES_FUNCTION} FROM PUBLIC",
    ),
    (
        # Stemmed keywords: ``kw`` now holds Snowball stems (``keyword_text``), and a
        # search looks for the query's stems ("camped" finds "camping"). The owner
        # rewrites every tenant's rows, so the policy is lifted for this transaction.
        f"ALTER TABLE {TABLE} NO FORCE ROW LEVEL SECURITY",
        REKEY_KEYWORDS,
        f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY",
    ),
    (
        # A sweep leaves no ``superseded_by`` naming a version it deleted: the versions
        # that named one name the first later version of their key that stays, or none
        # (the key's head again, ended at its ``valid_to``; ``ColdBackend.sweep``).
        f"""CREATE OR REPLACE FUNCTION engram_cold_sweep(moment timestamptz) RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            DECLARE
                tenants text[]; namespaces text[]; keys text[]; ids text[]; nexts text[];
                removed bigint;
            BEGIN
                WITH gone AS (
                    DELETE FROM public.{TABLE} WHERE expires_at <= moment
                    RETURNING tenant, ns, key, id, superseded_by
                )
                SELECT count(*), array_agg(tenant), array_agg(ns), array_agg(key),
                    array_agg(id), array_agg(superseded_by)
                INTO removed, tenants, namespaces, keys, ids, nexts FROM gone;
                FOR step IN 1..removed LOOP
                    UPDATE public.{TABLE} m SET superseded_by = g.next
                    FROM unnest(tenants, namespaces, keys, ids, nexts)
                        AS g(tenant, ns, key, id, next)
                    WHERE m.tenant = g.tenant COLLATE "C" AND m.ns = g.ns COLLATE "C"
                        AND m.key = g.key COLLATE "C" AND m.superseded_by = g.id COLLATE "C";
                    EXIT WHEN NOT FOUND;
                END LOOP;
                RETURN removed;
            END $$""",
    ),
)
"""Append-only: each entry is one schema version (a list of statements).

Every key starts with ``tenant`` (the first namespace label), so the table can be
distributed or partitioned by tenant. HNSW indexes are per vector dimension and
created when the first vector of that dimension arrives (:func:`hnsw_index_sql`).
"""

SETUP_LOCK = "SELECT pg_advisory_xact_lock(hashtext('engram_cold_setup'))"
NAMESPACE_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
VERSION_TABLE = f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE_NAME} (version integer PRIMARY KEY)"
GET_VERSION = f"SELECT coalesce(max(version), 0) FROM {VERSION_TABLE_NAME}"
PGVECTOR_VERSION = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
PGVECTOR_MINIMUM = (0, 8)
"""Iterative index scans (``hnsw.iterative_scan``) arrived in pgvector 0.8."""
SET_VERSION = f"INSERT INTO {VERSION_TABLE_NAME} (version) VALUES (%s)"

COLUMNS = (
    "id, ns, key, value, text, tags, source, sensitivity, importance, created_at, "
    "recorded_at, valid_from, valid_to, expires_at, ttl_s, provenance, superseded_by, model"
)
INCOMING = "engram_cold_incoming"
"""A transaction's temporary table for a bulk load: row-level security refuses ``COPY``
into a table with policies, so rows go in by binary ``COPY`` here, then by one
``INSERT ... SELECT`` (which the policy checks row by row)."""
CREATE_INCOMING = (
    f"CREATE TEMP TABLE {INCOMING} ON COMMIT DROP AS "
    f"SELECT tenant, {COLUMNS}, embedding, kw FROM {TABLE} WITH NO DATA"
)
COPY_INSERT = f"COPY {INCOMING} (tenant, {COLUMNS}, embedding, kw) FROM STDIN (FORMAT BINARY)"
MOVE_INCOMING = (
    f"INSERT INTO {TABLE} (tenant, {COLUMNS}, embedding, kw) "
    f"SELECT tenant, {COLUMNS}, embedding, kw FROM {INCOMING}"
)
INSERT = (
    f"INSERT INTO {TABLE} (tenant, {COLUMNS}, embedding, kw) VALUES "
    "(%s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb,"
    " %s, %s, %s, %s)"
)
"""One version (fewer than :data:`BULK_ROWS` go in this way: no temporary table)."""
COPY_TYPES = (
    "text",
    "text",
    "text",
    "text",
    "jsonb",
    "text",
    "text[]",
    "text",
    "text",
    "float8",
    "timestamptz",
    "timestamptz",
    "timestamptz",
    "timestamptz",
    "timestamptz",
    "float8",
    "jsonb",
    "text",
    "text",
    "vector",
    "text",
)
"""Binary COPY column types, in ``COPY_INSERT`` order (vectors go as float32 bytes)."""

CLOSE = f"UPDATE {TABLE} SET valid_to = %s, superseded_by = %s WHERE id = %s"
SET_EXPIRY = f"UPDATE {TABLE} SET expires_at = %s WHERE id = %s"
SET_VECTOR = f"UPDATE {TABLE} SET embedding = %s, model = %s WHERE id = %s"
SELECT = f"SELECT {COLUMNS} FROM {TABLE} m"
HISTORY = f"{SELECT} WHERE m.tenant = %s AND m.ns = %s AND m.key = %s ORDER BY m.recorded_at, m.id"
STALE = f"{SELECT} WHERE m.text <> '' AND (m.model IS NULL OR m.model <> %s) ORDER BY m.id LIMIT %s"
SWEEP = "SELECT engram_cold_sweep(%s)"
"""Every tenant's expired versions (the one delete that spans tenants: see MIGRATIONS)."""
NOTE_ERASURE = f"SELECT {ERASED_FUNCTION}"
"""Count one committed erasure (what other processes read to drop their caches)."""
ERASURE_COUNT = f"SELECT {ERASURES_FUNCTION}"
"""How many erasures have been counted, in every tenant (a number, no tenant's data)."""
FETCH = f"{SELECT} WHERE m.id = ANY(%s)"
SIGNAL_COLUMNS = "m.recorded_at, m.importance"
"""What scoring needs of a version besides its relevance; both never change for an id."""
SIGNALS = f"SELECT m.id, {SIGNAL_COLUMNS} FROM {TABLE} m WHERE m.id = ANY(%s)"
EXCERPTS = (
    f"SELECT m.id, m.text, m.value, m.valid_from, {SIGNAL_COLUMNS} FROM {TABLE} m "
    "WHERE m.id = ANY(%s)"
)
"""What re-ranking reads of each candidate (``ColdBackend.excerpts``)."""
HEADS = (
    f"{SELECT} WHERE m.tenant = %s AND m.ns = %s AND m.superseded_by IS NULL AND m.key = ANY(%s)"
)
ERASED = "RETURNING ns, key, text <> '', embedding IS NOT NULL"
VACUUM = f"VACUUM (FULL, ANALYZE) {TABLE}"
BULK_ROWS = 500
"""An insert of at least this many rows checks whether the planner's statistics are stale."""


def analyze_if_stale_sql(inserted: int) -> str:
    """ANALYZE the table when ``inserted`` rows (just committed) plus the changes the
    statistics views count make more than 500 + 20% of the rows the planner knows of.

    Right after a bulk load the planner still believes the table is (nearly) empty
    and picks b-tree scans with filters over GIN/range plans; autovacuum fixes that
    only after its nap. The views lag up to a second behind a busy writer, so the
    caller's own count (an integer, formatted in) decides for the rows it just wrote.
    """
    return f"""DO $$ BEGIN
    IF (SELECT c.reltuples < 0
            OR {int(inserted)} + coalesce(s.n_mod_since_analyze, 0) > 500 + 0.2 * c.reltuples
        FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
        WHERE c.oid = '{TABLE}'::regclass) THEN ANALYZE {TABLE}; END IF;
END $$"""


RELATION_SIZES = f"""
SELECT '{TABLE}', pg_table_size('{TABLE}'::regclass)
UNION ALL
SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
FROM pg_index i WHERE i.indrelid = '{TABLE}'::regclass
ORDER BY 2 DESC, 1
"""
"""``(name, bytes)`` of the table (with its TOAST) and of each of its indexes, largest first."""
SHARED_BUFFERS = (
    "SELECT setting::bigint * pg_size_bytes(unit) FROM pg_settings WHERE name = 'shared_buffers'"
)


SESSION_SETTINGS = (
    "SET jit = off; SET plan_cache_mode = force_custom_plan; "
    "SET max_parallel_workers_per_gather = 0"
)
"""Settings of the backend's pooled sessions.

``max_parallel_workers_per_gather``: a search's exact branch, planned over a large
selection, would start parallel workers even when its gate then skips it (17 ms
at 100k items); a search reads a few hundred rows, never enough to share out.
``jit``: compiling a plan takes tens of milliseconds, more than any of these
statements runs; PostgreSQL would start doing it once a large table pushes a
search's estimated cost past ``jit_above_cost``. ``plan_cache_mode``: psycopg
prepares a statement run five times, after which PostgreSQL may switch to one
generic plan for every parameter value; a tenant's size decides between a GIN and
a b-tree plan, so each execution is planned for its own values.
"""

HNSW_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', %s, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.max_scan_tuples', %s, true)"
)
"""Transaction-local settings of a vector search.

With pgvector's iterative index scan a filtered query keeps walking the graph
until ``LIMIT`` rows pass the filter (or ``hnsw.max_scan_tuples`` is spent)
instead of returning fewer rows than asked. Which plan serves a selection of
1,000 versions or more is the planner's choice: pgvector (0.8) costs an index
scan by the selection's share of the table, so the HNSW index serves a tenant
and an exact scan of its rows serves one user among a hundred (forcing the index
there walked 6,000 graph nodes for 50 rows: 300 ms instead of 3 ms at 100k items).
"""


def hnsw_settings_params(ef_search: int, max_scan_tuples: int) -> tuple[str, str]:
    """Parameters of :data:`HNSW_SETTINGS` (``ef_search`` capped at pgvector's 1000)."""
    return str(min(_positive(ef_search), 1000)), str(_positive(max_scan_tuples))


def _positive(n: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidInputError(f"expected a positive integer, got {n!r}")
    return n


def hnsw_index_name(dims: int) -> str:
    return f"{TABLE}_hnsw_{_dims(dims)}"


def hnsw_index_sql(dims: int) -> str:
    """Create the cosine HNSW index over vectors of ``dims`` dimensions (a partial
    expression index), through the owner's function (the application role owns nothing)."""
    return f"SELECT engram_cold_hnsw({_dims(dims)})"


RELATION_EXISTS = "SELECT to_regclass(%s) IS NOT NULL"


def _dims(dims: int) -> int:
    if not isinstance(dims, int) or isinstance(dims, bool) or not 0 < dims <= 16000:
        raise InvalidInputError(f"vector dimension must be in 1..16000, got {dims!r}")
    return dims


# -- the filter contract over JSONB -------------------------------------------------------


def _guards(path: tuple[str, ...]) -> list[str]:
    """Each proper prefix of ``path`` must be an object (never walk into an array)."""
    return ["jsonb_typeof(m.value #> %s::text[]) = 'object'" for _ in path[1:]]


def _guard_params(path: tuple[str, ...]) -> tuple[object, ...]:
    return tuple(list(path[:i]) for i in range(1, len(path)))


_JSONB_KINDS: dict[Kind, str] = {
    "number": "jsonb_typeof(m.value #> %s::text[]) = 'number'",
    "string": "jsonb_typeof(m.value #> %s::text[]) = 'string'",
    "null": "jsonb_typeof(m.value #> %s::text[]) = 'null'",
    "true": "(m.value #> %s::text[]) = 'true'::jsonb",
    "false": "(m.value #> %s::text[]) = 'false'::jsonb",
}


class PostgresFilterDialect:
    """Reads ``m.value`` JSONB: kinds by ``jsonb_typeof``, numbers compared as JSONB
    numerics (exact, ``1 = 1.0``), strings compared with ``COLLATE "C"`` (code points)."""

    def is_kind(self, path: tuple[str, ...], kind: Kind) -> Fragment:
        parts = [*_guards(path), _JSONB_KINDS[kind]]
        return "(" + " AND ".join(parts) + ")", (*_guard_params(path), list(path))

    def present(self, path: tuple[str, ...]) -> Fragment:
        parts = [*_guards(path), "(m.value #> %s::text[]) IS NOT NULL"]
        return "(" + " AND ".join(parts) + ")", (*_guard_params(path), list(path))

    def compare(self, path: tuple[str, ...], kind: Kind, sql_op: str, operand: Scalar) -> Fragment:
        if kind == "number":  # (a float as its shortest exact text: float8 -> numeric
            # keeps 15 digits, so 2**53 as a float would not equal a stored 2**53)
            exact = operand if isinstance(operand, int) else repr(operand)
            return f"(m.value #> %s::text[]) {sql_op} to_jsonb(%s::numeric)", (list(path), exact)
        return f'(m.value #>> %s::text[]) COLLATE "C" {sql_op} %s::text', (list(path), operand)


DIALECT = PostgresFilterDialect()


# -- selections ---------------------------------------------------------------------------


def prefix_sql(prefix: Namespace) -> Fragment:
    """Label-wise prefix match (tenant first, so the tenant-keyed indexes apply).

    The tenant column holds a namespace's first label, so a one-label prefix is
    exactly a tenant.
    """
    if len(prefix) <= 1:
        return prefix_range_sql(prefix)
    joined = join_namespace(prefix)
    # One b-tree range on (tenant, ns), then the exact rule: p itself or p + SEP + more
    # (a label may hold other control characters, which sort inside the range).
    sql, params = prefix_range_sql(prefix)
    return f"{sql} AND (m.ns = %s OR m.ns >= %s)", (*params, joined, joined + NAMESPACE_SEPARATOR)


def prefix_range_sql(prefix: Namespace) -> Fragment:
    """A b-tree range on ``(tenant, ns)`` holding every namespace under ``prefix``: exact
    for up to one label, else a superset (labels continuing with a control character)."""
    if not prefix:
        return "TRUE", ()
    if len(prefix) == 1:
        return "m.tenant = %s", (prefix[0],)
    joined = join_namespace(prefix)
    upper = chr(ord(NAMESPACE_SEPARATOR) + 1)
    return "m.tenant = %s AND m.ns >= %s AND m.ns < %s", (prefix[0], joined, joined + upper)


def view_sql(view: View) -> Fragment:
    """SQL form of :meth:`View.admits`."""
    parts: list[str] = []
    params: list[object] = []
    if not view.include_expired:
        parts.append("(m.expires_at IS NULL OR m.expires_at > %s)")
        params.append(view.now)
    if view.as_of is None and view.include_superseded:
        return " AND ".join(parts) or "TRUE", tuple(params)
    if view.as_of is None:
        parts.append("m.superseded_by IS NULL")
    moment = view.as_of if view.as_of is not None else view.now
    parts.append(
        "m.recorded_at <= %s AND m.valid_from <= %s AND (m.valid_to IS NULL OR m.valid_to > %s)"
    )
    params.extend((moment, moment, moment))
    return " AND ".join(parts), tuple(params)


def tags_sql(tags: Sequence[str]) -> Fragment:
    if not tags:
        return "TRUE", ()
    return "m.tags && %s::text[]", (list(tags),)


def where_sql(scan: Scan) -> Fragment:
    """The WHERE clause (without the keyword) selecting ``scan``'s versions."""
    parts = (
        prefix_sql(scan.prefix),
        view_sql(scan.view),
        compile_filter(scan.conditions, DIALECT),
        tags_sql(scan.tags),
    )
    return " AND ".join(p[0] for p in parts), sum((p[1] for p in parts), ())


def scan_sql(scan: Scan) -> Fragment:
    where, params = where_sql(scan)
    sql = f"{SELECT} WHERE {where} ORDER BY m.recorded_at DESC, m.id LIMIT %s OFFSET %s"
    return sql, (*params, scan.limit, scan.offset)


def history_params(namespace: Namespace, key: str) -> tuple[object, ...]:
    return (namespace[0] if namespace else "", join_namespace(namespace), key)


def heads_sql(namespace: Namespace, keys: Sequence[str]) -> Fragment:
    return HEADS, (namespace[0] if namespace else "", join_namespace(namespace), list(keys))


def namespaces_sql(prefix: Namespace) -> Fragment:
    where, params = prefix_sql(prefix)
    return f"SELECT DISTINCT m.ns FROM {TABLE} m WHERE m.superseded_by IS NULL AND {where}", params


def erase_sql(prefix: Namespace, keys: Sequence[str] | None) -> Fragment:
    """Delete every version of ``keys`` in exactly ``prefix``, or everything under it."""
    if keys is None:
        where, params = prefix_sql(prefix)
    else:
        where = "m.tenant = %s AND m.ns = %s AND m.key = ANY(%s)"
        params = (prefix[0] if prefix else "", join_namespace(prefix), list(keys))
    return f"DELETE FROM {TABLE} m WHERE {where} {ERASED}", params


# -- retrieval ----------------------------------------------------------------------------


def tsquery_text(words: Sequence[str], max_terms: int = MAX_SEARCH_TERMS) -> str:
    """A ``to_tsquery`` text matching any of ``words`` (each quoted as a lexeme)."""
    unique = list(dict.fromkeys(w.replace("'", "''").replace("\\", "\\\\") for w in words))
    return " | ".join(f"'{w}'" for w in unique[:max_terms])


def keyword_sql(scan: Scan, tsquery: str, k: int) -> Fragment:
    """Versions whose text matches any query word, ranked by ``ts_rank`` (term
    frequency, normalised by document length), then id: ``(id, *SIGNAL_COLUMNS)``."""
    where, params = where_sql(scan)
    sql = (
        f"SELECT m.id, {SIGNAL_COLUMNS} FROM {TABLE} m, to_tsquery('{TS_CONFIG}', %s) q "
        f"WHERE m.tsv @@ q AND {where} ORDER BY ts_rank(m.tsv, q, 1) DESC, m.id LIMIT %s"
    )
    return sql, (tsquery, *params, k)


def _embedded_where(scan: Scan, model_id: str, dims: int) -> Fragment:
    where, params = where_sql(scan)
    return f"m.dims = {_dims(dims)} AND m.model = %s AND {where}", (model_id, *params)


def small_sql(prefix: Namespace, below: int) -> Fragment:
    """Whether fewer than ``below`` current versions lie under ``prefix`` (a boolean).

    An index-only scan of the head index that stops at ``below``: a cheap upper
    bound of what a search for live versions selects, to choose exact or HNSW search.
    It counts the b-tree range around ``prefix`` (the exact prefix rule would make
    PostgreSQL visit every counted row's heap page: 1,000 pages instead of 100 for
    one user's 1,000 versions).
    """
    if below <= 0:
        return "FALSE", ()
    where, params = prefix_range_sql(prefix)
    sql = (
        f"(SELECT count(*) < %s FROM (SELECT 1 FROM {TABLE} m "
        f"WHERE m.superseded_by IS NULL AND {where} LIMIT %s) s)"
    )
    return sql, (below, *params, below)


EXACT_DISTANCE = "coalesce(nullif(m.embedding <=> %s, 'NaN'), 1.0)"
"""A version's cosine distance to the query, computed for every row (no index covers the
bare column); zero vectors (NaN distance) count as orthogonal."""


def vector_sql(
    scan: Scan, model_id: str, query: Vector, k: int, *, exact: bool, gate: Fragment = ("TRUE", ())
) -> Fragment:
    """The ``k`` embedded versions nearest ``query`` by cosine distance, when ``gate``
    (a condition on no row) holds: ``(id, distance, *SIGNAL_COLUMNS)``.

    Approximate: ordered by the HNSW-indexed expression ``embedding::vector(d)``.
    Exact: ordered by the bare column (which no index covers), so PostgreSQL
    computes every distance; zero vectors (NaN distance) count as orthogonal.
    """
    dims = int(query.shape[0])
    where, params = _embedded_where(scan, model_id, dims)
    if exact:
        distance, order = EXACT_DISTANCE, "2, m.id"
    else:
        distance, order = f"m.embedding::vector({dims}) <=> %s", "2"
    sql = (
        f"SELECT m.id, {distance} AS distance, {SIGNAL_COLUMNS} FROM {TABLE} m "
        f"WHERE {where} AND {gate[0]} ORDER BY {order} LIMIT %s"
    )
    return sql, (query, *params, *gate[1], k)


def cosines_sql(scan: Scan, model_id: str, query: Vector, ids: Sequence[str]) -> Fragment:
    """``(id, distance)`` to ``query`` of each of ``ids`` that ``scan`` admits, embedded
    with ``model_id``: the distance the exact search orders by (zero vectors orthogonal)."""
    where, params = _embedded_where(scan, model_id, int(query.shape[0]))
    sql = f"SELECT m.id, {EXACT_DISTANCE} FROM {TABLE} m WHERE {where} AND m.id = ANY(%s)"
    return sql, (query, *params, list(ids))


def size_sql(prefix: Namespace, below: int) -> Fragment:
    """:func:`small_sql` as a statement of its own: one row, one boolean."""
    gate, params = small_sql(prefix, below)
    return f"SELECT {gate}", params


def nearest_sql(scan: Scan, model_id: str, query: Vector, k: int, exact_below: int) -> Fragment:
    """One statement for a whole vector search of a selection of unknown size.

    The approximate branch runs only when the selection is not small, the exact
    one only when the approximate one found fewer than ``k`` rows (a small
    selection, or an iterative scan that spent its ``hnsw.max_scan_tuples``).
    Both gates are one-time filters: PostgreSQL skips a gated branch's scan
    entirely, and each branch plans as it would alone. One round trip. Once the
    size is known (:func:`size_sql`), each branch alone is cheaper to run.
    """
    small, small_params = small_sql(scan.prefix, exact_below)
    approx, approx_params = vector_sql(
        scan, model_id, query, k, exact=False, gate=(f"NOT {small}", small_params)
    )
    short = ("(SELECT count(*) FROM ann) < %s", (k,))
    exact, exact_params = vector_sql(scan, model_id, query, k, exact=True, gate=short)
    sql = (
        f"WITH ann AS MATERIALIZED ({approx}) "
        "SELECT * FROM ann WHERE (SELECT count(*) FROM ann) >= %s "
        f"UNION ALL ({exact})"
    )
    return sql, (*approx_params, k, *exact_params)
