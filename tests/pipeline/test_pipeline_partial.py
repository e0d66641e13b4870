"""`pipeline.partial.build_models`: the tables a reader wants, and only what they are made from,
hold row for row what the full build's tables hold (every hand-made scenario at once)."""

from __future__ import annotations

import duckdb
import pytest

from gpu_finops.advise.figures import TABLES, figures_of
from pipeline.errors import PipelineError
from pipeline.partial import build_models, models_for
from pipeline.runner import MODELS


def _rows(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple]:
    return con.execute(f"select * from {table} order by all").fetchall()


@pytest.fixture(scope="module")
def partial(scenario_dirs, prices_csv):
    con = build_models(scenario_dirs, prices_csv, TABLES)
    yield con
    con.close()


def test_every_table_it_builds_is_the_full_builds(partial, con):
    built = {name for (name,) in partial.execute(
        "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}
    wanted = {model.name for model in models_for(TABLES)}
    assert set(TABLES) <= wanted <= built
    assert "fct_chargeback" not in built and "fct_workload_timeline" not in built  # nothing the figures skip
    for table in sorted(wanted):
        assert _rows(partial, table) == _rows(con, table), table


def test_the_advice_figures_are_the_full_builds(partial, con, built):
    for run_id in built.run_ids:
        assert figures_of(partial, run_id) == figures_of(con, run_id), run_id


def test_models_come_in_build_order_with_what_they_read():
    order = [model.name for model in MODELS]
    chosen = [model.name for model in models_for(["fct_workloads"])]
    assert chosen == sorted(chosen, key=order.index)
    for model in models_for(["fct_workloads"]):
        assert {d for d in model.dependencies() if not d.startswith("raw_")} <= set(chosen), model.name
    with pytest.raises(PipelineError, match="no model makes table 'fct_nothing'"):
        models_for(["fct_nothing"])
