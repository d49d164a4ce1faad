"""The application role every PostgreSQL tier runs as, and the tenant setting its
row-level security policies read.

Each tier's ``setup(admin_url, role)`` runs as an admin (the schema owner): it migrates
the tier's tables, creates or updates one login role for every tier (no superuser, no
``BYPASSRLS``, owner of nothing, so every policy applies to it), grants it what the
tier needs and returns the role's connection string. Every tier's tables then have
``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` with a policy on :data:`TENANT`, the
``app.tenant_id`` setting the backend sets from the namespace or principal it acts for
(transaction-local, so a pooled connection never carries a tenant over).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from engram._principal import validate_id
from engram.config import AppRole
from engram.errors import BackendError, ConfigError

TENANT = "current_setting('app.tenant_id', true)"
"""What every policy compares a row's tenant with (NULL or '' when none is set)."""
SET_TENANT = "SELECT set_config('app.tenant_id', coalesce(%s, ''), true)"
"""Transaction-local: ends with the transaction (or a pipeline's implicit one)."""
SET_SESSION_TENANT = "SELECT set_config('app.tenant_id', coalesce(%s, ''), false)"
"""Session-wide, for a connection whose statements run in many implicit transactions."""

MAINTAIN_SINCE = 170000
"""PostgreSQL 17 added the MAINTAIN privilege (VACUUM and ANALYZE without owning)."""
CAN_MAINTAIN = "SELECT bool_and(has_table_privilege(t, 'MAINTAIN')) FROM unnest(%s::text[]) t"
MAY_VACUUM = (
    "SELECT pg_has_role(c.relowner, 'USAGE') OR CASE WHEN "
    f"current_setting('server_version_num')::int >= {MAINTAIN_SINCE} "
    "THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END "
    "FROM pg_class c WHERE c.oid = %s::regclass"
)
"""Whether the current role may ``VACUUM FULL`` a table: it owns it, or holds MAINTAIN."""

CLEAR_STATISTICS_SINCE = 180000
"""PostgreSQL 18 added ``pg_clear_attribute_stats``."""
CLEAR_EMPTIED_STATISTICS = (
    "SELECT pg_catalog.pg_clear_attribute_stats(n.nspname, c.relname, a.attname, false) "
    "FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 "
    "AND NOT a.attisdropped "
    "WHERE c.oid = ANY(%s::regclass[]) AND c.reltuples = 0"
)
"""Drop the planner statistics of the tables (of a ``text[]`` of names) that an ``ANALYZE``
has just found empty: ``ANALYZE`` samples no row of an empty table, so it writes no
statistics and leaves the sampled values of rows since deleted in ``pg_statistic``."""


def vacuum_full(url: str, table: str, what: str) -> bool:
    """``VACUUM FULL`` ``table`` at ``url`` when the connecting role may (it owns the table,
    or holds ``MAINTAIN`` on PostgreSQL 17+), so deleted rows leave its files, and
    ``ANALYZE`` it, so they leave the planner's sampled values (``pg_statistic``) too;
    whether it ran. ``what`` names the table in an error."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            allowed = conn.execute(MAY_VACUUM, (table,)).fetchone()
            if not allowed or not allowed[0]:
                return False
            conn.execute(f"VACUUM (FULL, ANALYZE) {table}")
            clear_emptied_statistics(conn, (table,))
    except psycopg.Error as exc:
        raise BackendError(f"{what} compaction failed: {exc}") from exc
    return True


def clear_emptied_statistics(
    conn: psycopg.Connection[tuple[object, ...]], tables: Sequence[str]
) -> None:
    """After ``VACUUM (FULL, ANALYZE)`` of ``tables``, drop the statistics of those left
    empty (:data:`CLEAR_EMPTIED_STATISTICS`; before PostgreSQL 18 they stay until rows
    come back and are analysed)."""
    if conn.info.server_version >= CLEAR_STATISTICS_SINCE:
        conn.execute(CLEAR_EMPTIED_STATISTICS, (list(tables),))


BYPASSES = "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"


def tenant_policy(table: str, tenant_column: str = "tenant_id") -> tuple[str, ...]:
    """``ENABLE`` + ``FORCE`` row-level security on ``table``, rows keyed by a column."""
    return row_policy(table, f"{tenant_column} = {TENANT}")


def row_policy(table: str, condition: str) -> tuple[str, ...]:
    """``ENABLE`` + ``FORCE`` row-level security on ``table``: a row is seen, written and
    kept only while ``condition`` holds (one policy for every command)."""
    return (
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS {table}_tenant ON {table}",  # a migration re-run rebuilds it
        f"CREATE POLICY {table}_tenant ON {table} USING ({condition}) WITH CHECK ({condition})",
    )


def role_sql(role: AppRole, exists: bool) -> sql.Composed:
    verb = sql.SQL("ALTER ROLE" if exists else "CREATE ROLE")
    flags = sql.SQL("LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE")
    if role.password is None:
        return sql.SQL("{} {} {}").format(verb, sql.Identifier(role.name), flags)
    password = sql.SQL("PASSWORD {}").format(sql.Literal(role.password))
    return sql.SQL("{} {} {} {}").format(verb, sql.Identifier(role.name), flags, password)


def grant_sql(
    role: str,
    tables: Sequence[str],
    *,
    read_only: Sequence[str] = (),
    functions: Sequence[str] = (),
    maintain: bool = False,
) -> list[sql.Composed]:
    """What the role may do: read and write ``tables`` (and ``MAINTAIN`` them when the
    server has it), read ``read_only`` (version tables: no tenant's data), run
    ``functions`` (signatures, e.g. ``f(integer)``)."""
    ident = sql.Identifier(role)
    privileges = "SELECT, INSERT, UPDATE, DELETE" + (", MAINTAIN" if maintain else "")
    statements = [
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(ident),
        sql.SQL("GRANT {} ON {} TO {}").format(sql.SQL(privileges), _names(tables), ident),
    ]
    if read_only:
        statements.append(sql.SQL("GRANT SELECT ON {} TO {}").format(_names(read_only), ident))
    for signature in functions:
        statements.append(
            sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(sql.SQL(signature), ident)
        )
    return statements


def _names(tables: Sequence[str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.Identifier(t) for t in tables)


def ensure_role(conn: psycopg.Connection[tuple[object, ...]], role: AppRole) -> bool:
    """Create or update ``role`` on the admin connection ``conn``; whether the server has
    the ``MAINTAIN`` privilege to grant."""
    validate_id("role name", role.name)
    # Role and grant changes of concurrent setups would clash ("tuple concurrently
    # updated"): they take turns, until the caller's transaction ends.
    conn.execute("SELECT pg_advisory_xact_lock(hashtext('engram_roles'))")
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role.name,))
    conn.execute(role_sql(role, exists.fetchone() is not None))
    version = conn.execute("SHOW server_version_num").fetchone()
    return version is not None and int(str(version[0])) >= MAINTAIN_SINCE


def role_url(admin_url: str, role: AppRole) -> str:
    """How ``role`` connects: ``admin_url`` with the role's user and password, in the
    same form (a ``postgresql://`` URL, or a libpq ``key=value`` string)."""
    if admin_url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(admin_url)
        login = quote(role.name, safe="")
        if role.password is not None:
            login += ":" + quote(role.password, safe="")
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(("postgresql", f"{login}@{host}", parts.path, parts.query, ""))
    params = {k: str(v) for k, v in conninfo_to_dict(admin_url).items()}
    params["user"] = role.name
    params.pop("password", None)
    if role.password is not None:
        params["password"] = role.password
    return make_conninfo("", **params)


def bypasses_rls(url: str) -> bool:
    """Whether ``url`` connects as a superuser or a ``BYPASSRLS`` role."""
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute(BYPASSES).fetchone()
    except psycopg.Error as exc:
        raise BackendError(f"cannot connect to PostgreSQL: {exc}") from exc
    return row is None or bool(row[0])


def refuse_bypass(url: str, tier: str) -> None:
    """Raise :class:`ConfigError` if ``url``'s role would not be subject to RLS."""
    if bypasses_rls(url):
        raise ConfigError(
            f"the {tier} must connect as a role without SUPERUSER or BYPASSRLS "
            "(row-level security would not apply); use the role setup() creates"
        )


def setup_table(
    admin_url: str, role: AppRole | None, table: str, migrations: Sequence[str], what: str
) -> str:
    """Create or migrate one table of its own (its ``migrations`` versioned in
    ``<table>_migrations``, setups of it taking turns) and the application role with its
    grants, as the admin; the role's connection string. Idempotent."""
    role = role or AppRole()
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{table}_setup",))
            _migrate(conn, table, migrations)
            maintain = ensure_role(conn, role)
            versions = (f"{table}_migrations",)
            for statement in grant_sql(role.name, (table,), read_only=versions, maintain=maintain):
                conn.execute(statement)
    except psycopg.Error as exc:
        raise BackendError(f"{what} schema setup failed: {exc}") from exc
    return role_url(admin_url, role)


def _migrate(
    conn: psycopg.Connection[tuple[object, ...]], table: str, migrations: Sequence[str]
) -> None:
    conn.execute(f"CREATE TABLE IF NOT EXISTS {table}_migrations (version integer PRIMARY KEY)")
    first = conn.execute(f"SELECT coalesce(max(version), 0) FROM {table}_migrations").fetchone()
    done = int(str(first[0])) if first else 0
    for version, script in enumerate(migrations[done:], start=done + 1):
        conn.execute(script.encode())
        conn.execute(f"INSERT INTO {table}_migrations VALUES (%s)", (version,))
