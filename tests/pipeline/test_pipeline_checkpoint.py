"""The SQL last_checkpoint_s agrees with the published Python function bit for bit."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.runner import create_macros
from scheduler.eventlog.schema import last_checkpoint_s


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    create_macros(connection)
    yield connection
    connection.close()


def sql_last_checkpoint(con, start, end, interval):
    return con.execute(
        "select last_checkpoint_s(?::double, ?::double, ?::double)", [start, end, interval]
    ).fetchone()[0]


@pytest.mark.parametrize(
    ("start", "end", "interval"),
    [
        (0.0, 2000.0, 600.0),
        (100.0, 100.0, 60.0),
        (0.0, 1.0, 0.1),  # 1.0 // 0.1 == 9.0 in Python, floor(1.0 / 0.1) == 10
        (5.0, 3.0, 1.0),
        (0.0, 3600.0, None),
        (0.0, 3600.0, 0.0),
        (0.3, 7.7, 0.7),
    ],
)
def test_known_cases(con, start, end, interval):
    assert sql_last_checkpoint(con, start, end, interval) == last_checkpoint_s(start, end, interval)


@settings(max_examples=200, deadline=None)
@given(
    start=st.floats(0, 1e6, allow_nan=False),
    length=st.floats(-10, 1e6, allow_nan=False),
    interval=st.one_of(st.none(), st.floats(1e-3, 1e5, allow_nan=False)),
)
def test_random_cases(con, start, length, interval):
    end = start + length
    assert sql_last_checkpoint(con, start, end, interval) == last_checkpoint_s(start, end, interval)
