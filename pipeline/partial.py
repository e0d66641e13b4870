"""Only the models some tables need, built in memory: for a reader that wants a few figures
of a run many times over (``advise quotas`` reads four tables of each trial's replay).

`build_models` loads the runs' raw tables as `pipeline.build.build` does, then runs the
models the wanted tables read, directly or through others (`Model.dependencies`), in the
build's own order and with its settings (one thread, the same memory bound, the same
macros). A model depends on its inputs only, so each table it makes holds what a full build
would: `tests/pipeline/test_pipeline_partial.py` compares them row by row with a full build's. What it
leaves out is what no wanted table reads (the FOCUS rows when unwanted, chargeback, the
timeline, …), the audits, and the database file: nothing is written, nothing to clean up.
The audits still run on every run a user is shown, in the full build of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from pipeline.build import (
    BUILD_MEMORY_LIMIT,
    FOCUS_TABLE,
    _create_raw_tables,
    _load_runs,
    _nodes_needing,
)
from pipeline.connect import connect, plan_as_written
from pipeline.errors import PipelineError
from pipeline.focus.columns import table_columns, virtual_columns
from pipeline.inputs import read_price_book, read_run_dir
from pipeline.runner import MODELS, Model, create_macros, run_model


def models_for(tables: Iterable[str]) -> list[Model]:
    """The models that make `tables`, and every model they read, in build order."""
    by_name = {model.name: model for model in MODELS}
    wanted: set[str] = set()
    stack = list(tables)
    while stack:
        name = stack.pop()
        if name in wanted or name.startswith("raw_"):
            continue
        if name not in by_name:
            raise PipelineError(f"build: no model makes table {name!r}")
        wanted.add(name)
        stack.extend(by_name[name].dependencies())
    return [model for model in MODELS if model.name in wanted]


def build_models(run_dirs: list[Path], prices: Path, tables: Iterable[str],
                 charge_period_s: int = 3600) -> duckdb.DuckDBPyConnection:
    """An in-memory database holding `tables` (and what they are made from) for `run_dirs`:
    the caller reads it and closes it."""
    runs = [read_run_dir(Path(run_dir)) for run_dir in run_dirs]
    models_in_use = {model for run in runs for model in run.cluster.column("gpu_model").to_pylist() if model}
    price_rows = read_price_book(Path(prices), models_in_use, _nodes_needing(runs))
    con = connect(":memory:", read_only=False)
    try:
        con.execute("SET threads TO 1")  # trials build side by side (advise); exact sums: the build's content
        con.execute(f"SET memory_limit = '{BUILD_MEMORY_LIMIT}'")
        plan_as_written(con)
        _create_raw_tables(con)
        _load_runs(con, runs, price_rows, charge_period_s)
        create_macros(con)
        focus_names = [column.name for column in table_columns(False)]
        for model in models_for(tables):
            if model.name == FOCUS_TABLE:
                run_model(con, model, focus_names, virtual_columns(False))
            else:
                run_model(con, model)
    except BaseException:
        con.close()
        raise
    return con
