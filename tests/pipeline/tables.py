"""Helpers for narrative table tests: query rows and compare them with expected tables."""

from __future__ import annotations

import pytest


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params or []).fetchall()


def approx_rows(actual: list[tuple], expected: list[tuple]) -> None:
    """Row lists equal, floats compared with pytest.approx (relative 1e-6, absolute 1e-9)."""
    assert len(actual) == len(expected), actual
    for got, want in zip(actual, expected, strict=True):
        assert got == tuple(pytest.approx(v, abs=1e-9) if isinstance(v, float) else v for v in want), got


def as_dict(con, sql: str, params=None) -> dict[tuple, object]:
    """Rows of (key..., value) as {key tuple: value}."""
    return {tuple(row[:-1]): row[-1] for row in rows(con, sql, params)}


def idle_by_cause(con, run_id: str) -> dict[tuple, float]:
    """(gpu_model, idle reason) → GPU-hours over the run (zero amounts left out)."""
    return {
        key: value
        for key, value in as_dict(
            con,
            """select gpu_model, idle_reason, sum(gpu_hours) from int_idle_by_cause
               where run_id = ? group by all""",
            [run_id],
        ).items()
        if abs(value) > 1e-12
    }
