"""`gpu-finops sql`: reads work in three formats; writes and file access are refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dashboards.errors import DashboardError
from dashboards.sql import query_frame, run_sql, saved_queries

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


# --- Saved queries and the `sql` command ------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sql.md"


def test_every_saved_query_runs_and_has_a_title(fixture_db):
    saved = saved_queries()
    assert len(saved) >= 10
    for query in saved:
        assert query.title and query.question, query.name
        rows = json.loads(run_sql(fixture_db, fmt="json", name=query.name))
        assert rows, f"{query.name} returned no row on the fixture"


def test_saved_query_answers_on_the_fixture(fixture_db):
    def rows(name):
        return json.loads(run_sql(fixture_db, fmt="json", name=name))

    lost = rows("preemption_waste")
    assert lost == [{"run_id": "demo-a", "team": "ml-research", "victim_workloads": 1,
                     "lost_gpu_hours": 4.0, "lost_cost": 8.0}]
    charged = {(r["run_id"], r["team"]): r["charged_cost"] for r in rows("chargeback_idle_shared")}
    # fct_chargeback's window rule, as the Teams page shows it: the A100 idle of =SUM(A1)'s hours
    # to ml-research ($48), the H100 idle of infer-6's hours to platform ($336)
    assert charged[("demo-a", "ml-research")] == 288 + 48
    assert charged[("demo-a", "platform")] == 48 + 336
    assert sum(v for (run, _), v in charged.items() if run == "demo-a") == pytest.approx(1536.0, abs=0.02)
    by_label = {r["label_value"]: r for r in rows("cost_by_label") if r["run_id"] == "demo-a"}
    # the same bill by cost-center: team o'brien carries no label, the platform line keeps its name
    assert set(by_label) == {"cc-research", "cc-platform", "Unlabelled", "Unallocated (idle)"}
    assert by_label["cc-research"]["charged_idle_shared"] == charged[("demo-a", "ml-research")]
    assert sum(r["charged_idle_shared"] for r in by_label.values()) == pytest.approx(1536.0, abs=0.05)
    reclaimed = {r["team"]: r["charged_reclaimer_pays"] for r in rows("chargeback_idle_shared")
                 if r["run_id"] == "demo-a"}
    assert reclaimed["team-o'brien"] == 32 + 8  # =SUM(A1)'s lost work, reclaimed by gang-2
    assert rows("unservable_demand")[0]["reason"] == "LargerThanCluster"
    phases = {(r["run_id"], r["phase"]): r["allocation_pct"] for r in rows("allocation_by_phase")}
    assert phases[("demo-b", "steady")] == 100.0 and phases[("demo-b", "drain")] is None
    committed = {r["run_id"]: r for r in rows("commitment_utilization")}
    assert committed["demo-a"]["utilization_pct"] == 25.0  # 96 of 384 H100 GPU-hours
    quota = {(r["cluster_queue"], r["flavor"]): r for r in rows("queue_quota_use")}
    assert quota[("cq-ml", "h100")]["peak_borrowed_gpus"] == 4.0
    # =SUM(A1)'s one preemption, by gang-2 (never preempted itself): a chain of its own at depth 1
    chains = rows("preemption_chains")
    assert [(c["origin_preemptor"], c["preempted_pods"], c["preempted_in_cascade"], c["depth"],
             c["lost_gpu_hours"], c["lost_cost"]) for c in chains] == [("gang-2", 1, 0, 1, 4.0, 8.0)]
    assert [(p["preemptor_priority"], p["victim_priority"], p["preempted_pods"]) for p in
            rows("preemption_priority_pairs")] == [(100, 0, 1)]
    assert [(k["victim_kind"], k["preemptor_kind"], k["lost_gpu_hours"], k["lost_gpu_hours_in_cascade"])
            for k in rows("preemption_by_kind")] == [("fine-tune", "training", 4.0, 0.0)]


def test_sql_command_with_a_saved_query(fixture_db, capsys):
    from gpu_finops.cli import main

    assert main(["sql", "--db", str(fixture_db), "--query", "preemption_waste", "--format",
                 "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "run_id,team,victim_workloads,lost_gpu_hours,lost_cost", "demo-a,ml-research,1,4.0,8.0"]
    assert main(["sql", "--db", str(fixture_db), "--query", "nope"]) == 2
    assert "no saved query 'nope'; known: allocation_by_phase, allocation_rate_daily" in capsys.readouterr().err
    assert main(["sql", "--db", str(fixture_db)]) == 2
    assert main(["sql", "--db", str(fixture_db), "SELECT 1", "--query", "preemption_waste"]) == 2
    assert "give a query or --query NAME" in capsys.readouterr().err


@pytest.mark.parametrize("statement", ["INSERT INTO dim_runs SELECT * FROM dim_runs",
                                       "DROP TABLE dim_runs", "COPY dim_runs TO 'x.csv'",
                                       "ATTACH 'x.duckdb' AS x"])
def test_sql_command_refuses_writes_with_one_line(fixture_db, capsys, statement, tmp_path,
                                                  monkeypatch):
    from gpu_finops.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["sql", "--db", str(fixture_db), statement]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-finops sql: refused") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing attached


def test_query_frame_for_the_sql_page(fixture_db):
    frame, cut = query_frame(fixture_db, "SELECT run_id, start_ts::DATE AS day FROM dim_runs "
                                         "ORDER BY 1", max_rows=1)
    assert cut and len(frame) == 1 and str(frame["day"].dtype).startswith("datetime64")
    frame, cut = query_frame(fixture_db, "SELECT 1 AS x, 2 AS x")
    assert list(frame.columns) == ["x", "x_2"] and not cut
    with pytest.raises(DashboardError, match="refused"):
        query_frame(fixture_db, "DELETE FROM dim_runs")


def test_docs_answer_the_saved_questions_and_list_every_mart():
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", text, re.DOTALL)
    saved = {q.name: q for q in saved_queries()}
    for query in saved.values():  # each saved query appears verbatim, under its name
        assert f"`{query.name}`" in text, query.name
        assert any(block.strip() == query.sql.strip() for block in blocks), query.name
    marts = Path(__file__).resolve().parents[2] / "pipeline" / "models" / "marts"
    for model in sorted(marts.glob("*.sql")):
        assert f"`{model.stem}`" in text, f"docs/sql.md does not list the mart {model.stem}"


def test_saved_queries_name_the_platform_line_in_words(fixture_db):
    """The SQL page's examples say "Unallocated (idle)", never the marts' internal `__idle__`, in
    their questions and in the rows they return for a team."""
    from dashboards.sql import saved_queries

    for saved in saved_queries():
        assert "__idle__" not in (saved.question or ""), saved.name
    for name in ("cost_per_team_per_week", "chargeback_idle_shared"):
        teams = {r["team"] for r in json.loads(run_sql(fixture_db, fmt="json", name=name))}
        assert "Unallocated (idle)" in teams and "__idle__" not in teams, name
