"""A database an older gpu-finops built (issue 24): every reader says one line, "built by an
older version: rebuild with `gpu-finops build …`", never a traceback nor binder errors reported
as failed audits; `build` into it migrates it. Before, `report` raised CatalogException and
`validate` listed the binder errors as failed audits."""

from __future__ import annotations

import duckdb
import pytest

from tests.reliability.processes import assert_one_line_error, in_process


@pytest.fixture(scope="module")
def built(workspace, tmp_path_factory):
    from pipeline.build import build

    db = tmp_path_factory.mktemp("older") / "current.duckdb"
    build([workspace.run_a, workspace.run_b], workspace.inputs / "prices.csv", db, show_progress=False)
    return db


def _older(built, tmp_path, how: str):
    db = tmp_path / "older.duckdb"
    db.write_bytes(built.read_bytes())
    with duckdb.connect(str(db)) as con:
        if how == "marker":  # records an older layout of the marts
            con.execute("update gpu_finops_build set marts_version = '1'")
        else:  # before the marker: a mart an older build did not have, and no marker
            con.execute("drop table gpu_finops_build")
            con.execute("drop table fct_workload_timeline")
            con.execute("alter table focus_cost_records drop column x_IdleReason")
    return db


READERS = {
    "report": lambda db, out: ["report", "--db", str(db), "--out", str(out / "report")],
    "validate": lambda db, out: ["validate", "--db", str(db)],
    "explain": lambda db, out: ["explain", "w000", "--db", str(db)],
    "sql": lambda db, out: ["sql", "--db", str(db), "--query", "idle_cost_by_cause"],
    "compare": lambda db, out: ["compare", "--db", str(db), "--all"],
}


@pytest.mark.parametrize("how", ["marker", "no-marker"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_says_one_line_about_an_older_database(built, tmp_path, reader, how):
    db = _older(built, tmp_path, how)
    argv = READERS[reader](db, tmp_path)
    code, out, err = in_process(*argv)
    if how == "no-marker" and code == 0:
        return  # this reader needs nothing the older layout lacks: it answers
    line = assert_one_line_error(reader, code, err)
    assert "built by an older version" in line and "gpu-finops build" in line, line
    assert "FAIL" not in out + err and "Binder" not in err and "Catalog" not in err


def test_build_into_an_older_database_migrates_it(built, workspace, tmp_path):
    db = _older(built, tmp_path, "marker")
    code, _, err = in_process("build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"),
                              "--db", str(db))
    assert code == 0, err
    assert in_process("validate", "--db", str(db))[0] == 0
