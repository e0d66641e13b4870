"""Rebuilding the demo's runs gives the demo's database again, bit for bit.

The small scenarios of test_pipeline_build.py have too few rows per group for the order a
hash join hands rows to a sum to matter; the demo has enough (before the ordered sums, two
builds of its runs differed in about 2,100 rows of fct_chargeback, 2 of fct_showback and 1 of
fct_workloads, each by about 1e-16)."""

from __future__ import annotations

import duckdb
import pytest

from pipeline.build import build


@pytest.mark.slow
def test_rebuilding_the_demo_runs_gives_identical_tables(demo_db, tmp_path):
    out = demo_db.parent
    rebuilt = tmp_path / "rebuilt.duckdb"
    build([out / "run", out / "run-kube-default"], out / "inputs" / "prices.csv", rebuilt, show_progress=False)
    con = duckdb.connect()
    try:
        con.execute("attach ? as demo (read_only)", [str(demo_db)])
        con.execute("attach ? as again (read_only)", [str(rebuilt)])
        tables = [row[0] for row in con.execute(
            "select table_name from information_schema.tables"
            " where table_catalog = 'demo' and table_type = 'BASE TABLE' order by 1").fetchall()]
        assert len(tables) > 30
        differing = {}
        for table in tables:
            only_demo, only_again = (con.execute(
                f"select count(*) from (select * from {a}.{table} except all select * from {b}.{table})"
            ).fetchone()[0] for a, b in (("demo", "again"), ("again", "demo")))
            if only_demo or only_again:
                differing[table] = (only_demo, only_again)
        assert differing == {}, f"rows only in the demo's / only in the rebuild, per table: {differing}"
    finally:
        con.close()
