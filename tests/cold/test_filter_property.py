"""Property: the SQL the SQLite dialect compiles agrees with the Python evaluator."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.backends.sqlite._cold_sql import DIALECT
from engram.recall.filters import compile_filter, matches, parse_filter

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, -1.5, 2.0]),
    st.sampled_from(["", "a", "B", "b", "1", "é", "aa"]),
)
fields = st.sampled_from(["x", "y", "m.x"])
values = st.dictionaries(
    st.sampled_from(["x", "y", "m"]),
    st.one_of(scalars, st.lists(scalars, max_size=2), st.dictionaries(st.just("x"), scalars)),
    max_size=3,
)
ordered = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5]), st.sampled_from(["a", "b"]))
operators = st.one_of(
    st.tuples(st.sampled_from(["$eq", "$ne"]), scalars),
    st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), ordered),
    st.tuples(st.just("$in"), st.lists(scalars, min_size=1, max_size=3)),
)
filters = st.dictionaries(fields, st.lists(operators, min_size=1, max_size=2).map(dict), max_size=2)


def _sql_matches(conn: sqlite3.Connection, filter_: dict[str, Any], value: dict[str, Any]) -> bool:
    sql, params = compile_filter(parse_filter(filter_), DIALECT)
    row = conn.execute(f"SELECT {sql} FROM (SELECT ? AS value) m", (*params, json.dumps(value)))
    return bool(row.fetchone()[0])


@settings(max_examples=400, deadline=None)
@given(filter_=filters, value=values)
def test_sqlite_sql_agrees_with_python(filter_: dict[str, Any], value: dict[str, Any]) -> None:
    with sqlite3.connect(":memory:") as conn:
        python = matches(parse_filter(filter_), value)
        assert _sql_matches(conn, filter_, value) == python, (filter_, value)
