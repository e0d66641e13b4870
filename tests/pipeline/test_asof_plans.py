"""Every ``asof join`` of the models runs as DuckDB's ASOF join, in the full build and in the
partial one (`pipeline.connect.plan_as_written`). Left to the planner, an ASOF join whose left
side it estimates below 64 rows becomes a nested loop join plus an arg_max per left row: on
the demo's run it estimated 29 rows where int_idle_by_cause had 92,568, and compared 100 M row
pairs (40 CPU s, where the ASOF join takes 1 s). The probe is the smallest such join: a
one-row left side, which the planner's own choice turns into a nested loop join."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import pipeline.build as build_module
from pipeline.connect import plan_as_written
from pipeline.partial import build_models
from pipeline.runner import run_model

PROBE = ("select * from (values (1, 1)) as a(k, t) asof left join (values (1, 0, 5)) as b(k, t, v) "
         "on a.k = b.k and b.t <= a.t")


def _planned_as_asof(con: duckdb.DuckDBPyConnection) -> bool:
    plan = "\n".join(str(value) for row in con.execute(f"explain {PROBE}").fetchall() for value in row)
    return "Asof Join" in plan and "Nested Loop" not in plan


def test_the_probe_is_a_nested_loop_under_duckdbs_default():
    with duckdb.connect() as con:
        assert not _planned_as_asof(con)  # else the tests below could not fail
        plan_as_written(con)
        assert _planned_as_asof(con)


def test_a_partial_build_plans_asof_joins_as_written(scenario_dirs, prices_csv):
    con = build_models(scenario_dirs, prices_csv, ["int_idle_by_cause"])
    try:
        assert _planned_as_asof(con)
    finally:
        con.close()


def test_the_full_build_plans_asof_joins_as_written(scenario_dirs, prices_csv, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch):
    plans: dict[str, bool] = {}

    def planned(con, model, *args):  # the probe's plan on the build's own connection, then the model
        plans[model.name] = _planned_as_asof(con)
        run_model(con, model, *args)

    monkeypatch.setattr(build_module, "run_model", planned)
    build_module.build(scenario_dirs, prices_csv, tmp_path / "finops.duckdb", show_progress=False)
    assert plans["int_idle_by_cause"] and all(plans.values())
