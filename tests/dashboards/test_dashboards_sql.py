"""`gpu-finops sql`: reads work in three formats; writes and file access are refused."""

from __future__ import annotations

import json

import pytest

from dashboards.errors import DashboardError
from dashboards.sql import run_sql

QUERY = "SELECT tenant, count(*) AS n FROM fct_workloads WHERE run_id = 'demo-a' GROUP BY 1 ORDER BY 1"


def test_select_in_three_formats(fixture_db):
    table = run_sql(fixture_db, QUERY)
    assert "ml-research" in table and "(3 rows)" in table
    assert run_sql(fixture_db, QUERY, "csv").splitlines() == [
        "tenant,n", "ml-research,2", "platform,2", "team-o'brien,2"]
    assert json.loads(run_sql(fixture_db, QUERY, "json"))[0] == {"tenant": "ml-research", "n": 2}


@pytest.mark.parametrize("query", [
    "WITH t AS (SELECT * FROM dim_runs) SELECT run_id FROM t",
    "DESCRIBE focus_cost_records",
    "SHOW TABLES",
    "PRAGMA table_info('dim_runs')",
    "EXPLAIN SELECT * FROM dim_runs",
    "SELECT 'read_csv(''/etc/passwd'')' AS harmless_text",
])
def test_other_read_statements_work(fixture_db, query):
    assert run_sql(fixture_db, query, "csv")


def test_timestamps_serialise_in_json(fixture_db):
    rows = json.loads(run_sql(fixture_db, "SELECT start_ts FROM dim_runs ORDER BY 1", "json"))
    assert rows[0]["start_ts"] == "2026-11-02T00:00:00"


@pytest.mark.parametrize("query", [
    "INSERT INTO dim_runs SELECT * FROM dim_runs",
    "DROP TABLE dim_runs",
    "DELETE FROM dim_runs",
    "UPDATE dim_runs SET seed = 1",
    "CREATE TABLE x AS SELECT 1",
    "COPY dim_runs TO '/tmp/gpu-finops-leak.csv'",
    "COPY (SELECT 1) TO '/tmp/gpu-finops-leak.csv'",
    "ATTACH '/tmp/other.duckdb' AS other",
    "DETACH memory",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM READ_CSV_AUTO ('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM '/etc/passwd'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "PRAGMA threads = 1",
    "CALL pragma_version()",
    "EXPORT DATABASE '/tmp/gpu-finops-export'",
    "SELECT 1; DROP TABLE dim_runs",
    "EXPLAIN ANALYZE DELETE FROM dim_runs",
    "",
])
def test_writes_and_file_access_are_refused(fixture_db, query):
    with pytest.raises(DashboardError):
        run_sql(fixture_db, query)
    assert "dim_runs" in run_sql(fixture_db, "SHOW TABLES", "csv")  # nothing was dropped


def test_external_access_is_off_on_the_connection(fixture_db):
    # The second lock: even a statement the checker let through cannot reach files.
    from dashboards.data import connect_read_only

    con = connect_read_only(fixture_db)
    try:
        assert con.execute("SELECT current_setting('enable_external_access')").fetchone() == (False,)
        with pytest.raises(Exception, match="(?i)permission|disabled"):
            con.execute("SELECT * FROM read_csv('/etc/passwd')")
    finally:
        con.close()


def test_bad_format_and_missing_db(fixture_db, tmp_path):
    with pytest.raises(DashboardError, match="unknown format"):
        run_sql(fixture_db, QUERY, "xml")
    with pytest.raises(DashboardError, match="not found"):
        run_sql(tmp_path / "missing.duckdb", QUERY)
    with pytest.raises(DashboardError, match="query failed"):
        run_sql(fixture_db, "SELECT * FROM no_such_table")
