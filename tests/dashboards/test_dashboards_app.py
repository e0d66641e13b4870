"""The Streamlit app, headless (AppTest), on the fixture marts (fixture_db.py): every page runs,
every sidebar filter and page control changes what it shows, errors and empty states are clear.

The expected numbers come from the fixture's narrative (fixture_db.py's module docstring).
"""

from __future__ import annotations

import os
import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest
from fixture_db import build_fixture_db
from streamlit.testing.v1 import AppTest

from dashboards.data import DB_ENV_VAR, connect_read_only

APP = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")
PAGES = {name: f"app_pages/{name}.py" for name in (
    "overview", "teams", "idle", "queues", "pending", "preemption", "scenarios", "workload",
    "sql_console")}


def _app(monkeypatch: pytest.MonkeyPatch, db: Path | str | None) -> AppTest:
    if db is None:
        monkeypatch.delenv(DB_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(DB_ENV_VAR, str(db))
    return AppTest.from_file(APP, default_timeout=60)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _on(monkeypatch, db, page: str, run: str = "demo-a") -> AppTest:
    """The app on ``page`` with ``run`` picked in the sidebar."""
    at = _ok(_app(monkeypatch, db).run())
    at = _ok(at.selectbox(key="filters.run").select(run).run())
    return _ok(at.switch_page(PAGES[page]).run())


def _charts(at: AppTest) -> int:
    return len(at.get("vega_lite_chart"))


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _table(at: AppTest, *columns: str):
    """The first table on the page that has all ``columns``."""
    for frame in at.dataframe:
        if set(columns) <= set(frame.value.columns):
            return frame.value
    raise AssertionError(f"no table with {columns}: {[list(f.value.columns) for f in at.dataframe]}")


def _one_csv_per_table(at: AppTest) -> None:
    assert len(at.get("download_button")) >= len(at.dataframe) > 0


# --- Overview ---------------------------------------------------------------------------------


def test_overview_renders_metrics_charts_and_downloads(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "overview")
    values = _metrics(at)
    assert values["Total cost"] == "$1.5k"  # compact: five metrics share one laptop-wide row
    assert values["Idle cost"] == "$1.2k"
    assert values["Partial placement"] == "16 GPU-h"
    helps = {m.label: m.help for m in at.metric}
    assert helps["Total cost"].startswith("$1,536.00")  # the exact figure is one hover away
    assert helps["Idle cost"].startswith("$1,168.00")
    # (list − effective) over the capacity paid: $1,920 at list (idle included), $1,536 paid; over
    # contract the same (no negotiated rate: contracted = list), both shown, named in the help
    assert values["ESR list / contract"] == f"{(1920 - 1536) / 1920:.1%} / {(1920 - 1536) / 1920:.1%}"
    assert "ESROverList" in {m.label: m.help for m in at.metric}["ESR list / contract"]
    # spend by team, idle by cause, usage over time, costliest, cost per training run
    assert _charts(at) == 5
    downloads = [b.key for b in at.get("download_button")]
    assert len(downloads) == len(at.dataframe) == 6  # a CSV button under every table
    # train-1 finished ($240, the H100 full: no idle to carry); gang-2 ($32) and =SUM(A1) ($48,
    # plus the $48 of the 2 idle A100 GPUs of its hours it carries) failed; big-4 never held a GPU
    runs = _table(at, "outcome", "cost_per_run")
    assert dict(zip(runs["outcome"], runs["cost_per_run"], strict=True)) == {
        "Finished": 240.0, "Failed": (32.0 + 48.0 + 48.0) / 2}


def test_overview_filters_change_the_numbers(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "overview")
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("team-o'brien").run())
    values = _metrics(at)
    assert values["Total cost"] == "$32.00"  # the partially placed gang's A100 hours only
    assert values["Idle cost"] == "$1.2k"  # idle belongs to the cluster, not the team
    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("H100").run())
    assert _metrics(at)["Total cost"] == "$0.00"
    assert any("No team used GPUs" in i.value for i in at.info)
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 3), date(2026, 11, 3))).run())
    at = _ok(at.multiselect(key="filters.teams.demo-a").unselect("team-o'brien").run())
    assert _metrics(at)["Total cost"] == "$576.00"  # 8 H100 x 24 h x $3


# --- Teams ------------------------------------------------------------------------------------


def test_teams_idle_policy_toggle_and_filters(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "teams")
    assert _charts(at) == 5  # charged per team, over time, per label, cost of waiting, checkpoint loss
    _one_csv_per_table(at)
    # the default is the report's chargeback policy (by period and GPU model), as the budgets'
    assert at.segmented_control(key="teams.idle_policy").value == "window"
    assert _metrics(at)["Unallocated (idle)"] == "$784.00"
    at = _ok(at.segmented_control(key="teams.idle_policy").set_value("separate").run())
    table = _table(at, "tenant", "charged_cost")
    assert dict(zip(table["tenant"], table["charged_cost"], strict=True)) == {
        "ml-research": 288.0, "platform": 48.0, "team-o'brien": 32.0, "Unallocated (idle)": 1168.0}
    assert _metrics(at)["Charged to teams"] == "$368.00"
    assert _metrics(at)["Unallocated (idle)"] == "$1.2k"

    # By period and GPU model: a team carries the idle of the hours and models it used. A100
    # hours 8-20: =SUM(A1) holds 2 of 4 GPUs, so ml-research carries the other 2 ($48); H100
    # hours 24-40: infer-6 holds 1 of 8, so platform carries 7 × 16 × $3 ($336); hours 0-10 the
    # H100 was full and gang-2's A100 hours too. The rest nobody used: the platform line.
    at = _ok(at.segmented_control(key="teams.idle_policy").set_value("window").run())
    table = _table(at, "tenant", "charged_cost")
    charged = dict(zip(table["tenant"], table["charged_cost"], strict=True))
    assert charged == pytest.approx({"ml-research": 288 + 48, "platform": 48 + 336,
                                     "team-o'brien": 32, "Unallocated (idle)": 1168 - 48 - 336})
    assert table["charged_cost"].sum() == pytest.approx(1536.0)  # nothing lost or made up
    assert _metrics(at)["Unallocated (idle)"] == "$784.00"
    # the cause-aware rule keeps day 2's no_demand on the platform line: platform carries none
    at = _ok(at.segmented_control(key="teams.idle_policy").set_value("cause").run())
    charged = dict(zip(*[_table(at, "tenant", "charged_cost")[c] for c in ("tenant", "charged_cost")],
                       strict=True))
    assert charged["platform"] == pytest.approx(48.0) and charged["ml-research"] == pytest.approx(336.0)
    # the reclaimer pays: =SUM(A1)'s lost hours 18-20 ($8) move to gang-2's team
    at = _ok(at.toggle(key="teams.reclaim").set_value(True).run())
    charged = dict(zip(*[_table(at, "tenant", "charged_cost")[c] for c in ("tenant", "charged_cost")],
                       strict=True))
    assert charged["team-o'brien"] == pytest.approx(32 + 8) and charged["ml-research"] == pytest.approx(336 - 8)
    at = _ok(at.toggle(key="teams.reclaim").set_value(False).run())
    at = _ok(at.segmented_control(key="teams.idle_policy").set_value("window").run())

    at = _ok(at.multiselect(key="filters.teams.demo-a").select("team-o'brien").run())
    assert _table(at, "tenant", "charged_cost")["tenant"].tolist() == ["team-o'brien"]
    at = _ok(at.multiselect(key="filters.teams.demo-a").unselect("team-o'brien").run())
    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("A100").run())
    table = _table(at, "tenant", "charged_cost")
    assert "platform" not in set(table["tenant"])  # platform used H100 only
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 3), date(2026, 11, 3))).run())
    # nobody used an A100 on day 2: its idle cost (4 GPUs x 24 h x $2) stays unallocated
    table = _table(at, "tenant", "charged_cost")
    assert dict(zip(table["tenant"], table["charged_cost"], strict=True)) == {"Unallocated (idle)": 192.0}


def test_teams_cost_by_label_groups_the_same_bill(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "teams")
    assert at.selectbox(key="teams.label_key").value == "cost-center"
    # the default (chargeback) policy: the teams' idle shares follow their workloads' labels
    table = _table(at, "allocation", "charged_cost")
    assert table["charged_cost"].sum() == pytest.approx(1536.0)  # the FOCUS total, as by team
    at = _ok(at.segmented_control(key="teams.idle_policy").set_value("separate").run())
    table = _table(at, "allocation", "charged_cost")
    # team o'brien's workloads carry no cost-center: Unlabelled, in words, never the mart's name
    assert dict(zip(table["allocation"], table["charged_cost"], strict=True)) == {
        "cc-research": 288.0, "cc-platform": 48.0, "Unlabelled": 32.0, "Unallocated (idle)": 1168.0}
    assert any("Adds up" in c.value and "Unlabelled" in c.value for c in at.caption)


def test_teams_cost_of_waiting_and_checkpoint_loss(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "teams")
    waiting = _table(at, "tenant", "pending_demand_list_value")
    # the fixture's waits: from submission to the first run (gang-2 never ran whole: 47 h of 8
    # GPUs; big-4 45 h of 32), at the list price of the cheapest model they accept (A100 $2, H100
    # $4); =SUM(A1) 1 h of 2 GPUs, infer-6 1 h of 1
    assert dict(zip(waiting["tenant"], waiting["pending_demand_list_value"], strict=True)) == pytest.approx({
        "team-o'brien": 8 * 47 * 2.0 + 32 * 45 * 4.0, "ml-research": 2 * 1 * 2.0, "platform": 1 * 1 * 2.0})
    losses = _table(at, "tenant", "lost_cost")
    assert sorted(zip(losses["tenant"], losses["cause"], losses["lost_cost"], strict=True)) == [
        ("ml-research", "reclaim", 8.0), ("team-o'brien", "time-out", 0.0)]


# --- Phases -----------------------------------------------------------------------------------


def test_phase_switch_narrows_every_page_to_its_window(monkeypatch, fixture_db):
    # demo-b is steady for hours 0-12 (b-1's run) and drains for 12-24 (its H100 idle)
    at = _on(monkeypatch, fixture_db, "overview", run="demo-b")
    assert at.segmented_control(key="filters.phase.demo-b").value == "steady"
    values = _metrics(at)
    assert values["Allocation rate"] == "100.0%" and values["Idle cost"] == "$0.00"
    at = _ok(at.segmented_control(key="filters.phase.demo-b").set_value("drain").run())
    assert _metrics(at)["Allocation rate"] == "0.0%"
    assert _metrics(at)["Idle cost"] == "$288.00"  # 8 H100 x 12 h x $3
    at = _ok(at.segmented_control(key="filters.phase.demo-b").set_value("all").run())
    assert _metrics(at)["Allocation rate"] == "50.0%"
    assert any("whole run" in c.value for c in at.caption)


# --- Idle GPUs --------------------------------------------------------------------------------


def test_idle_page_heatmap_and_fragmentation(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "idle")
    # by cause over time, heatmap, fragmentation, avoidable or sunk, commitment pools, unservable
    assert _charts(at) == 6
    _one_csv_per_table(at)
    values = _metrics(at)
    assert values["Idle"] == "76.4%"  # 440 of 576 GPU-hours
    assert values["Fragmentation"] == "168 GPU-h"
    assert values["Partial placement"] == "16 GPU-h"
    assert "GPU partitions (DRA)" not in [h.value for h in at.subheader]  # a run without --dra: nothing new
    heat = _table(at, "place", "idle_pct")
    assert set(heat["place"]) == {"rack-1", "rack-2"}
    at = _ok(at.segmented_control(key="idle.heatmap.level").set_value("node").run())
    at = _ok(at.segmented_control(key="idle.heatmap.bucket").set_value("day").run())
    heat = _table(at, "place", "idle_pct")
    assert set(heat["place"]) == {"node-h100-0", "node-a100-0"} and len(heat) == 4
    day2 = heat[heat["period_start"].dt.day == 3].set_index("place")["idle_pct"]
    assert day2["node-a100-0"] == 1.0  # nothing ran on the A100 node on day 2

    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("A100").run())
    assert _table(at, "gpu_model", "fragmentation_gpu_hours")["gpu_model"].tolist() == ["A100"]
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("platform").run())
    assert _metrics(at)["Fragmentation"] == "56 GPU-h"  # the team filter does not hide idle
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 3), date(2026, 11, 3))).run())
    assert _metrics(at)["Fragmentation"] == "0 GPU-h"  # day 2's idle is all no_demand


# --- Queues -----------------------------------------------------------------------------------


def test_queues_quota_charts_flavor_and_team_filters(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "queues")
    assert _charts(at) == 3  # one per ClusterQueue: cq-ml, cq-ob, cq-pl
    _one_csv_per_table(at)
    summary = _table(at, "cluster_queue", "flavor", "nominal_quota")
    h100 = summary[(summary["cluster_queue"] == "cq-ml") & (summary["flavor"] == "h100")].iloc[0]
    assert (h100["nominal_quota"], h100["borrowing_limit"], h100["peak_admitted_gpus"],
            h100["peak_borrowed_gpus"], h100["borrowed_gpu_hours"]) == (4, 4, 8, 4, 40)
    borrowed = _table(at, "tenant", "borrowed_gpu_hours")
    assert borrowed.to_dict("records") == [{"tenant": "ml-research", "cluster_queue": "cq-ml",
                                            "borrowed_gpu_hours": 40.0, "borrowed_cost": 120.0}]
    at = _ok(at.selectbox(key="queues.flavor.demo-a").select("a100").run())
    assert _charts(at) == 2  # cq-ml and cq-ob have an a100 flavor
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("team-o'brien").run())
    assert _charts(at) == 1  # only the queue that holds the team's workloads
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 3), date(2026, 11, 3))).run())
    usage = _table(at, "period_start", "admitted_gpus")
    assert usage["period_start"].min().day == 3 and usage["admitted_gpus"].sum() == 0


def test_queues_empty_state_and_fallback(monkeypatch, fixture_db, tmp_path):
    at = _on(monkeypatch, fixture_db, "queues", run="demo-b")  # replayed without queues
    assert any("has no Kueue queues" in i.value for i in at.info)
    assert _charts(at) == 0

    older = tmp_path / "no-queue-mart.duckdb"  # built before fct_queue_usage existed
    shutil.copy(fixture_db, older)
    with duckdb.connect(str(older)) as con:
        con.execute("DROP TABLE fct_queue_usage")
        con.execute("ALTER TABLE focus_cost_records DROP COLUMN x_Borrowed")
    at = _on(monkeypatch, older, "queues")
    assert any("no quota usage" in i.value for i in at.info)
    assert _charts(at) == 1  # GPUs held per ClusterQueue, from the FOCUS records
    held = _table(at, "cluster_queue", "held_gpus")
    assert set(held["cluster_queue"]) == {"cq-ml", "cq-ob", "cq-pl"}


# --- Pending ----------------------------------------------------------------------------------


def test_pending_page(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "pending")
    picker = at.selectbox(key="pending.workload.demo-a")
    # waiting workloads are offered first
    # judged at the end of the window the page shows (demo-a's steady phase ends on day 3)
    assert set(picker.options[:3]) == {f"{w} (waiting at 2026-11-04 00:00 UTC)"
                                       for w in ("gang-2", "big-4", "=SUM(A1)")}
    at = _ok(picker.select("big-4").run())
    assert _charts(at) == 3  # its timeline, its queue position, pending-by-reason
    _one_csv_per_table(at)
    timeline = _table(at, "seq", "reason")
    assert list(timeline["reason"].dropna()) == ["Unschedulable", "QuotaExceeded"]
    expanders = [e.label for e in at.expander]
    assert "QuotaExceeded: 2 workload(s)" in expanders
    assert "Unschedulable: 1 workload(s)" in expanders
    at = _ok(at.text_input(key="pending.search").input("o'brien'; DROP TABLE x --").run())
    assert any("No workload id contains" in i.value for i in at.info)
    at = _ok(at.text_input(key="pending.search").input("SUM").run())
    assert at.selectbox(key="pending.workload.demo-a").options == ["=SUM(A1) (waiting at 2026-11-04 00:00 UTC)"]
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 2), date(2026, 11, 2))).run())
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("ml-research").run())
    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("A100").run())
    assert [e.label for e in at.expander if "workload(s)" in e.label] == [
        "QuotaExceeded: 1 workload(s)"]  # =SUM(A1), preempted at hour 20 and waiting again


def test_pending_when_nothing_waits(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "pending", run="demo-b")
    assert any("No workload is waiting" in s.value for s in at.success)
    at = _ok(at.switch_page(PAGES["overview"]).run())
    assert _charts(at) >= 3


# --- Preemption -------------------------------------------------------------------------------


def test_preemption_page(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "preemption")
    assert _metrics(at) == {"Evicted pods": "1", "Victim workloads": "1", "Lost GPU-hours": "4.0",
                            "Lost cost": "$8.00", "Chains": "1", "Deepest": "1",
                            "Preempted in a cascade": "0", "Lost GPU-hours in chains": "4.0"}
    assert _charts(at) == 5  # lost over time, victims; who preempts whom, depths, chains
    _one_csv_per_table(at)
    victims = _table(at, "workload_id", "preempted_by")
    assert victims[["workload_id", "preempted_by", "lost_gpu_hours", "lost_cost"]].to_dict(
        "records") == [{"workload_id": "=SUM(A1)", "preempted_by": "gang-2",
                        "lost_gpu_hours": 4.0, "lost_cost": 8.0}]
    # gang-2 was never preempted: its preemption of =SUM(A1) is a chain of its own, depth 1
    chains = _table(at, "chain_id", "origin")
    assert chains[["origin", "origin_priority", "preempted_pods", "preempted_in_cascade", "depth",
                   "lost_gpu_hours", "lost_cost"]].to_dict("records") == [
        {"origin": "gang-2", "origin_priority": 0, "preempted_pods": 1, "preempted_in_cascade": 0,
         "depth": 1, "lost_gpu_hours": 4.0, "lost_cost": 8.0}]
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("platform").run())
    assert any("No workload was preempted" in s.value for s in at.success)
    at = _ok(at.multiselect(key="filters.teams.demo-a").unselect("platform").run())
    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("H100").run())
    assert _metrics(at)["Victim workloads"] == "0"  # the victim wanted A100s
    at = _ok(at.multiselect(key="filters.gpus.demo-a").unselect("H100").run())
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 3), date(2026, 11, 3))).run())
    assert _metrics(at)["Evicted pods"] == "0"  # the eviction was on day 1


# --- Scenarios --------------------------------------------------------------------------------


def test_scenarios_page(monkeypatch, fixture_db, tmp_path):
    at = _on(monkeypatch, fixture_db, "scenarios")
    # the defaults: outcome per cost; no kube-default run and no sweep, so the first run is the
    # baseline; the two runs share no hour, so they are compared whole
    assert at.selectbox(key="scenarios.rank_by").value == "cost_per_productive_gpu_hour"
    assert at.selectbox(key="scenarios.baseline").value == "demo-a"
    assert any("no hour in common" in c.value for c in at.caption)
    assert any(m.value.startswith("demo-") and " wins on cost per productive GPU-hour" in m.value
               for m in at.markdown)
    at = _ok(at.selectbox(key="scenarios.rank_by").select("total_cost").run())
    # Ranked, best first: demo-b's $579.84 against demo-a's $1,536.00
    ranked = _table(at, "rank", "scenario", "total cost $", "vs baseline $")
    assert ranked[["rank", "scenario"]].values.tolist() == [[1, "demo-b"], [2, "demo-a"]]
    assert ranked["vs baseline $"].tolist() == pytest.approx([-956.16, 0.0])
    assert _metrics(at)["Baseline"] == "$1.5k"  # demo-a's total cost
    assert _metrics(at)["Best against the baseline"] == "-$956.16"
    assert any("**demo-a**, rank 2 of 2" in c.value for c in at.caption)
    assert _charts(at) == 4  # ranking by usage class, change vs baseline, cost per team, p95 wait per team
    _one_csv_per_table(at)
    at = _ok(at.selectbox(key="scenarios.baseline").select("demo-b").run())
    assert _table(at, "rank", "vs baseline $")["vs baseline $"].tolist() == pytest.approx([0.0, 956.16])
    at = _ok(at.selectbox(key="scenarios.rank_by").select("finished").run())  # higher is better
    assert any("**demo-b**, rank" in c.value for c in at.caption)
    assert at.selectbox(key="scenarios.other.demo-b").value == "demo-a"
    at = _ok(at.radio(key="scenarios.window").set_value("common").run())
    assert len(_table(at, "rank", "scenario")) == 2

    at = _on(monkeypatch, fixture_db, "scenarios")  # the baseline and one scenario, per team
    assert at.selectbox(key="scenarios.other.demo-a").value == "demo-b"
    metrics = _metrics(at)
    assert metrics["Total cost"] == "$579.84"  # demo-b's: 8 H100 x 24 h x $3 + 32 cores x 12 h
    deltas = {m.label: m.delta for m in at.metric}
    assert deltas["Total cost"] == "-$956.16"  # against demo-a's $1,536.00
    by_team = _table(at, "run_id", "tenant", "effective_cost")
    assert set(by_team["run_id"]) == {"demo-a", "demo-b"}
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("ml-research").run())
    assert set(_table(at, "run_id", "tenant", "effective_cost")["tenant"]) == {"ml-research"}
    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("A100").run())
    assert _metrics(at)["Total cost"] == "$0.00"  # demo-b has no A100 node

    single = build_fixture_db(tmp_path / "one-run.duckdb")
    with duckdb.connect(str(single)) as con:
        con.execute("DELETE FROM dim_runs WHERE run_id = 'demo-b'")
    at = _on(monkeypatch, single, "scenarios")
    assert any("holds one run" in i.value for i in at.info)


# --- Workload detail --------------------------------------------------------------------------


def test_workload_detail_gantt_and_links(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "workload")
    assert at.selectbox(key="workload.pick.demo-a").value == "train-1"  # the costliest
    assert _charts(at) == 2  # Gantt of its pods, its events
    _one_csv_per_table(at)
    pods = _table(at, "pod_index", "node", "usage_class")
    assert pods[["pod_index", "gpu_hours"]].to_dict("records") == [
        {"pod_index": 0, "gpu_hours": 40.0}, {"pod_index": 1, "gpu_hours": 40.0}]
    assert at.query_params["workload"] == "train-1"  # the URL names what is shown

    at = _ok(at.text_input(key="workload.search").input("sum").run())
    at = _ok(at.selectbox(key="workload.pick.demo-a").select("=SUM(A1)").run())
    pods = _table(at, "pod_index", "node", "usage_class")
    assert pods["usage_class"].tolist() == ["Productive", "Lost to preemption"]
    at = _ok(at.text_input(key="workload.search").input("x' OR '1'='1").run())
    assert any("No workload id contains" in i.value for i in at.info)

    linked = _app(monkeypatch, fixture_db)  # opened from a link: /workload?run=demo-a&workload=…
    linked.query_params["run"] = "demo-a"
    linked.query_params["workload"] = "gang-2"
    at = _ok(linked.run())
    at = _ok(at.switch_page(PAGES["workload"]).run())
    assert at.selectbox(key="filters.run").value == "demo-a"
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("platform").run())
    assert at.selectbox(key="workload.pick.demo-a").value == "infer-6"  # platform's costliest


# --- SQL --------------------------------------------------------------------------------------


def test_sql_page_runs_saved_examples(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "sql_console")
    assert at.selectbox(key="sql.example").value == "cost_per_team_per_week"
    assert _charts(at) == 1
    _one_csv_per_table(at)
    result = _table(at, "team", "effective_cost")
    assert result["effective_cost"].sum() == pytest.approx(1536.0 + 579.84)  # both runs
    at = _ok(at.selectbox(key="sql.example").select("preemption_waste").run())
    assert _table(at, "team", "lost_cost")["lost_cost"].tolist() == [8.0]
    # the sidebar filters do not apply to hand-written SQL, and say so
    assert any("filters do not apply" in c.value for c in at.caption)


def test_sql_page_refuses_writes(monkeypatch, fixture_db):
    at = _on(monkeypatch, fixture_db, "sql_console")
    editor = "sql.query.cost_per_team_per_week"
    for statement in ("INSERT INTO dim_runs SELECT * FROM dim_runs", "DROP TABLE dim_runs",
                      "COPY dim_runs TO 'leak.csv'", "ATTACH 'other.duckdb' AS other",
                      "SELECT * FROM read_csv('/etc/passwd')"):
        at = _ok(at.text_area(key=editor).input(statement).run())
        assert any("refused" in w.value for w in at.warning), (statement, at.warning)
        assert not at.dataframe, statement
    con = connect_read_only(fixture_db)  # the app's own configuration: DuckDB wants one per file
    try:
        assert con.execute("SELECT count(*) FROM dim_runs").fetchone() == (2,)
    finally:
        con.close()


# --- Errors and empty databases ---------------------------------------------------------------


def test_missing_db_shows_an_error_page(monkeypatch, tmp_path):
    at = _app(monkeypatch, tmp_path / "nope.duckdb").run()
    assert not at.exception
    assert "database not found" in at.error[0].value
    at = _app(monkeypatch, None).run()
    assert not at.exception
    assert "GPU_FINOPS_DB" in at.error[0].value.replace("\\", "")  # shown as text: Markdown escaped


def test_empty_database_states(monkeypatch, tmp_path):
    db = build_fixture_db(tmp_path / "empty-facts.duckdb")
    with duckdb.connect(str(db)) as con:
        for table in ("fct_usage_hourly", "focus_cost_records", "fct_workloads",
                      "fct_workload_timeline", "fct_pod_intervals", "fct_queue_usage",
                      "fct_chargeback", "fct_evictions", "fct_unservable_demand",
                      "fct_commitment_utilization", "fct_preemption_cascades"):
            con.execute(f"DELETE FROM {table}")
    at = _ok(_app(monkeypatch, db).run())
    assert any("No cost records for these filters" in i.value for i in at.info)
    for page, message in (("pending", "No workload id contains"), ("teams", "No cost records"),
                          ("idle", "No cost records"), ("queues", "has no Kueue queues"),
                          ("preemption", None), ("workload", "No workload held GPUs"),
                          ("scenarios", None)):
        at = _ok(at.switch_page(PAGES[page]).run())
        if message:
            assert any(message in i.value for i in at.info), (page, [i.value for i in at.info])

    no_runs = build_fixture_db(tmp_path / "no-runs.duckdb")
    with duckdb.connect(str(no_runs)) as con:
        con.execute("DELETE FROM dim_runs")
    at = _ok(_app(monkeypatch, no_runs).run())
    assert any("holds no run" in i.value for i in at.info)


def test_rebuilt_database_is_reopened(monkeypatch, tmp_path):
    db = build_fixture_db(tmp_path / "rebuilt.duckdb")
    at = _ok(_app(monkeypatch, db).run())
    assert at.selectbox(key="filters.run").options[0].startswith("demo-b")
    # Rebuild as the pipeline does (new file, renamed over the old one) with one run fewer:
    # the app must notice the new mtime and read the new content.
    fresh = build_fixture_db(tmp_path / "rebuilt.duckdb.tmp")
    with duckdb.connect(str(fresh)) as con:
        con.execute("DELETE FROM dim_runs WHERE run_id = 'demo-b'")
    os.replace(fresh, db)
    at = _ok(_app(monkeypatch, db).run())
    assert [o.split(" ")[0] for o in at.selectbox(key="filters.run").options] == ["demo-a"]


@pytest.mark.slow
def test_scenarios_pair_is_compared_over_the_hours_the_ranking_compares(monkeypatch, demo_db):
    # the demo's two runs replay one trace under two profiles: their common hours are the ranking's
    # default window, and the per-team pair below it says it uses the same hours
    at = _on(monkeypatch, demo_db, "scenarios", run="demo-gang-v1.37")
    assert at.radio(key="scenarios.window").value == "common"
    assert any("the hours both runs cover, 2026-11-02 00:00 to " in c.value for c in at.caption)
    at = _ok(at.radio(key="scenarios.window").set_value("whole").run())
    assert any(" · whole runs · " in c.value for c in at.caption)
