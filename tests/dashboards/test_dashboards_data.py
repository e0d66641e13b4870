"""dashboards.data against the fixture marts: numbers, filters, hostile filter values."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from dashboards import data
from dashboards.errors import DashboardError

HOSTILE = ["x' OR '1'='1", "'; DROP TABLE fct_workloads; --", 'a"b', "%", "_", "\\"]


@pytest.fixture
def con(fixture_db):
    connection = data.connect_read_only(fixture_db)
    yield connection
    connection.close()


def test_pickers(con):
    assert data.list_runs(con)["run_id"].tolist() == ["demo-b", "demo-a"]  # newest first
    assert data.run_date_range(con, "demo-a") == (date(2026, 11, 2), date(2026, 11, 3))
    assert data.run_date_range(con, "nope") is None
    assert data.list_tenants(con, "demo-a") == ["ml-research", "platform", "team-o'brien"]
    assert data.list_gpu_models(con, "demo-a") == ["A100", "H100"]


def test_headline_conserves_capacity(con):
    metrics = data.headline_metrics(con, data.Filters("demo-a"))
    assert metrics["capacity_gpu_hours"] == 12 * 48
    assert metrics["gpu_hours"] == metrics["capacity_gpu_hours"]  # no team filter: all rows
    assert metrics["idle_gpu_hours"] == 440
    assert metrics["allocation_rate"] + metrics["idle_pct"] == pytest.approx(1.0)
    assert metrics["partial_placement_gpu_hours"] == 16  # gang-2: 4 A100 x 4 h
    assert metrics["total_cost"] == pytest.approx(1536.0)


def test_idle_cost_by_cause_includes_partial_placement(con):
    causes = data.idle_cost_by_cause(con, data.Filters("demo-a"))
    by_cause = dict(zip(causes["cause"], causes["gpu_hours"], strict=True))
    assert by_cause == {"fragmentation": 168, "no_demand": 272,
                        "gang_wait (partial placement)": 16}


def test_usage_over_time_and_buckets(con):
    filters = data.Filters("demo-a")
    daily = data.usage_class_over_time(con, filters, "day")
    assert daily["gpu_hours"].sum() == 576
    assert set(daily["usage_class"]) == set(data.USAGE_CLASSES)
    assert len(data.usage_class_over_time(con, filters, "hour")["period_start"].unique()) == 48
    with pytest.raises(DashboardError):
        data.usage_class_over_time(con, filters, "hour; DROP TABLE x")
    assert data.pick_time_bucket(filters, (date(2026, 11, 2), date(2026, 11, 3))) == "hour"
    assert data.pick_time_bucket(filters, (date(2026, 11, 2), date(2026, 11, 9))) == "day"


def test_costliest_workloads_and_filters(con):
    top = data.costliest_workloads(con, data.Filters("demo-a"))
    assert top["workload_id"].tolist()[0] == "train-1"
    assert top["effective_cost"].sum() == pytest.approx(368.0)  # = spend by team, all teams
    a100 = data.costliest_workloads(con, data.Filters("demo-a", gpu_models=("A100",)))
    assert set(a100["workload_id"]) == {"=SUM(A1)", "gang-2"}
    day2 = data.costliest_workloads(con, data.Filters("demo-a", date(2026, 11, 3), date(2026, 11, 3)))
    assert day2["workload_id"].tolist() == ["infer-6"]


def test_timeline_and_pending(con):
    timeline = data.workload_timeline(con, "demo-a", "gang-2")
    assert timeline["event"].tolist() == ["submitted", "pending", "reserved", "timed_out", "pending"]
    pending = data.pending_workloads(con, data.Filters("demo-a"))
    latest = dict(zip(pending["workload_id"], pending["latest_reason"], strict=True))
    assert latest == {"gang-2": "Unschedulable", "big-4": "QuotaExceeded",
                      "=SUM(A1)": "QuotaExceeded"}  # preempted and waiting again counts
    grouped = data.pending_by_reason(pending)
    assert grouped.iloc[0].to_dict()["latest_reason"] == "QuotaExceeded"
    assert grouped["workloads"].sum() == 3
    assert data.pending_workloads(con, data.Filters("demo-b")).empty
    assert data.pending_by_reason(data.pending_workloads(con, data.Filters("demo-b"))).empty
    assert data.partial_placement_workloads(con, data.Filters("demo-a"))["workload_id"].tolist() == [
        "gang-2"]


@pytest.mark.parametrize("value", HOSTILE)
def test_quotes_in_filter_values_are_harmless(con, value):
    filters = data.Filters(value, tenants=(value,), gpu_models=(value,))
    assert data.headline_metrics(con, filters)["capacity_gpu_hours"] == 0
    for query in (data.spend_by_team, data.idle_cost_by_cause, data.costliest_workloads,
                  data.partial_placement_workloads, data.pending_workloads):
        assert query(con, filters).empty
    assert data.workload_timeline(con, "demo-a", value).empty
    assert data.workload_details(con, "demo-a", value) is None
    assert data.search_workloads(con, "demo-a", value).empty  # wildcards match literally
    assert data.list_tenants(con, value) == []
    # the tables are all still there
    assert len(data.list_runs(con)) == 2


def test_tenant_with_a_quote_filters_correctly(con):
    spend = data.spend_by_team(con, data.Filters("demo-a", tenants=("team-o'brien",)))
    assert spend["tenant"].tolist() == ["team-o'brien"]
    assert data.search_workloads(con, "demo-a", "=sum")["workload_id"].tolist() == ["=SUM(A1)"]


def test_missing_db_is_a_dashboard_error(tmp_path, monkeypatch):
    with pytest.raises(DashboardError, match="not found"):
        data.connect_read_only(tmp_path / "missing.duckdb")
    with pytest.raises(DashboardError, match="GPU_FINOPS_DB"):
        data.require_db(None)
    monkeypatch.setenv(data.DB_ENV_VAR, str(tmp_path / "x.duckdb"))
    assert data.db_path_from_env() == tmp_path / "x.duckdb"


def test_connection_is_read_only(con):
    with pytest.raises(Exception, match="(?i)read-only|read only"):
        con.execute("DELETE FROM dim_runs")


# --- Teams: showback and chargeback -----------------------------------------------------------


@pytest.mark.parametrize("policy", ["separate", "window", "node", "cause"])
@pytest.mark.parametrize("reclaim", [False, True])
def test_chargeback_conserves_the_total_cost(con, policy, reclaim):
    for filters in (data.Filters("demo-a"), data.Filters("demo-a", date(2026, 11, 2), date(2026, 11, 2)),
                    data.Filters("demo-a", gpu_models=("A100",))):
        total = data.headline_metrics(con, filters)["total_cost"]
        showback = data.team_showback(con, filters, policy, reclaim)
        assert showback["charged_cost"].sum() == pytest.approx(total)
        over_time = data.team_cost_over_time(con, filters, "hour", policy, reclaim)
        assert over_time["charged_cost"].sum() == pytest.approx(total)


def test_window_idle_goes_to_the_users_of_each_hour_and_gpu_model(con):
    # fct_chargeback's rule: A100 hours 8-20, =SUM(A1) holds 2 of 4 GPUs: ml-research carries the
    # other 2 ($48); H100 hours 24-40, infer-6 holds 1 of 8: platform carries 7 ($336); the H100
    # was full in hours 0-10 and gang-2 filled the A100 node in hours 2-6
    shared = data.team_showback(con, data.Filters("demo-a"), "window").set_index("tenant")
    assert shared.loc["ml-research", "idle_share_cost"] == pytest.approx(48.0)
    assert shared.loc["platform", "idle_share_cost"] == pytest.approx(336.0)
    assert shared.loc["team-o'brien", "idle_share_gpu_hours"] == 0.0
    assert shared.loc["ml-research", "idle_share_gpu_hours"] == pytest.approx(2 * 12)
    # idle of hours and models nobody used stays on the platform line
    assert shared.loc["__idle__", "charged_cost"] == pytest.approx(1168 - 48 - 336)
    # demo-b: CPU costs are shared by CPU cost, GPU idle by GPU cost; GPU-hours stay GPU-hours
    b = data.team_showback(con, data.Filters("demo-b"), "window").set_index("tenant")
    assert b.loc["ml-research", "usage_cost"] == pytest.approx(288.0 + 3.84)
    assert b.loc["ml-research", "gpu_hours"] == 96.0
    # nobody used an A100 on day 2: its idle stays unallocated under every policy
    day2_a100 = data.Filters("demo-a", date(2026, 11, 3), date(2026, 11, 3), gpu_models=("A100",))
    for policy in data.IDLE_POLICIES:
        rows = data.team_showback(con, day2_a100, policy)
        assert rows[["tenant", "charged_cost"]].values.tolist() == [["__idle__", 192.0]]
    separate = data.team_showback(con, data.Filters("demo-a"), "separate").set_index("tenant")
    assert separate["idle_share_cost"].drop("__idle__").eq(0).all()
    assert separate.loc["__idle__", "charged_cost"] == 1168.0
    # the reclaimer pays: =SUM(A1)'s lost $8 moves from ml-research to gang-2's team
    moved = data.team_showback(con, data.Filters("demo-a"), "separate", reclaim=True).set_index("tenant")
    assert moved.loc["team-o'brien", "charged_cost"] == pytest.approx(32.0 + 8.0)
    assert moved.loc["ml-research", "reclaim_adjustment_cost"] == pytest.approx(-8.0)
    with pytest.raises(DashboardError, match="idle policy"):
        data.team_showback(con, data.Filters("demo-a"), "split'; DROP TABLE x")


def test_phases_narrow_the_window(con):
    windows = data.run_phases(con, "demo-b")
    assert list(windows) == ["steady", "drain"]  # no warm-up
    steady = data.with_phase(con, data.Filters("demo-b"), "steady")
    drain = data.with_phase(con, data.Filters("demo-b"), "drain")
    assert data.headline_metrics(con, steady)["idle_cost"] == 0.0
    assert data.headline_metrics(con, drain)["idle_cost"] == pytest.approx(8 * 12 * 3.0)
    assert data.headline_metrics(con, data.with_phase(con, data.Filters("demo-b"), None))[
        "total_cost"] == pytest.approx(579.84)
    # a phase the run does not have selects nothing
    warmup = data.with_phase(con, data.Filters("demo-b"), "warmup")
    assert data.headline_metrics(con, warmup)["capacity_gpu_hours"] == 0.0
    # dates and phase intersect
    narrowed = data.with_phase(con, data.Filters("demo-b", date(2026, 11, 11), date(2026, 11, 11)), "steady")
    assert data.headline_metrics(con, narrowed)["capacity_gpu_hours"] == 0.0
    with pytest.raises(DashboardError, match="run phase"):
        data.with_phase(con, data.Filters("demo-b"), "night")


def test_finops_metrics(con):
    filters = data.Filters("demo-a")
    assert data.unservable_demand(con, filters).values.tolist() == [
        ["platform", "LargerThanCluster", 1, 128.0, 256.0, 0.0]]
    payment = data.idle_by_payment(con, filters)
    # idle on the Committed H100 is sunk (288 GPU-h at $3), the A100's avoidable (152 at $2)
    assert payment.groupby("kind")["effective_cost"].sum().to_dict() == pytest.approx(
        {"sunk": 864.0, "avoidable": 304.0})
    pools = data.commitment_pools(con, "demo-a")
    assert pools[["sku_id", "utilization", "coverage"]].values.tolist() == [["gpu-h100", 0.25, 1.0]]
    saving = data.savings(con, filters)
    # (list − effective) over the capacity paid: used 464 → 368, idle H100 288 GPU-h at list $4
    # against $3 committed, idle A100 152 GPU-h at $2 either way
    assert saving["effective_savings_rate"] == pytest.approx(
        (464 + 288 * 4 + 304 - (368 + 864 + 304)) / (464 + 288 * 4 + 304))
    losses = data.eviction_losses(con, filters).set_index("cause")
    assert losses.loc["reclaim", "lost_cost_per_eviction"] == 8.0
    runs = data.training_run_costs(con, filters).set_index("outcome")
    assert runs.loc["failed", "runs"] == 2 and runs.loc["finished", "cost_per_run"] == 240.0
    # with the idle it carries (policy window): train-1 held all 8 H100 GPUs (no idle to carry);
    # gang-2 all 4 A100 GPUs in hours 2-6 (4 x 4 x $2 = $32, no idle), =SUM(A1) 2 of them in hours
    # 8-20 ($48) and, sole user, carries the other 2 idle GPUs of those hours (2 x 12 x $2 = $48)
    assert runs.loc["finished", ["usage_cost_per_run", "idle_share_per_run"]].tolist() == [240.0, 0.0]
    assert runs.loc["failed", ["usage_cost_per_run", "idle_share_per_run", "cost_per_run", "total_cost"]].tolist() \
        == pytest.approx([(32 + 48) / 2, 48 / 2, (32 + 48 + 48) / 2, 32 + 48 + 48])
    # the window's charge periods only: hours 0-10 hold gang-2's $32 and =SUM(A1)'s hours 8-10
    # (usage 2 x 2 x $2 = $8, idle carried $8); train-1 finished at 10:00, within the window
    morning = data.Filters("demo-a", phase="steady", phase_window=(datetime(2026, 11, 2), datetime(2026, 11, 2, 10)))
    unfinished = data.training_run_costs(con, morning).set_index("outcome").loc["unfinished"]
    assert unfinished[["runs", "idle_share_per_run", "total_cost"]].tolist() == pytest.approx([2, 8 / 2, 32 + 8 + 8])
    # a window that ends before the run does: nothing is known to have failed yet, and train-1
    # (finished at 10:00 on day 1) had not finished by 06:00
    early = data.Filters("demo-a", phase="steady", phase_window=(datetime(2026, 11, 2), datetime(2026, 11, 2, 6)))
    assert set(data.training_run_costs(con, early)["outcome"]) == {"unfinished"}


# --- Idle GPUs --------------------------------------------------------------------------------


def test_idle_over_time_heatmap_and_fragmentation(con):
    filters = data.Filters("demo-a")
    over_time = data.idle_by_cause_over_time(con, filters, "day")
    assert over_time.groupby("cause")["gpu_hours"].sum().to_dict() == {
        "fragmentation": 168.0, "gang_wait (partial placement)": 16.0, "no_demand": 272.0}
    racks = data.idle_heatmap(con, filters, "rack", "day")
    assert racks["idle_gpu_hours"].sum() == 440.0 and racks["capacity_gpu_hours"].sum() == 576.0
    assert racks["places_total"].unique().tolist() == [2]
    a100_day2 = racks[(racks["place"] == "rack-2") & (racks["period_start"].dt.day == 3)]
    assert a100_day2["idle_pct"].tolist() == [1.0]
    top_node = data.idle_heatmap(con, filters, "node", "day", limit=1)
    assert top_node["place"].unique().tolist() == ["node-h100-0"]  # 288 idle GPU-h vs 152
    with pytest.raises(DashboardError, match="heatmap level"):
        data.idle_heatmap(con, filters, "x_Node; DROP TABLE x")
    fragmentation = data.fragmentation_by_model(con, filters).set_index("gpu_model")
    assert fragmentation.loc["H100", "fragmentation_gpu_hours"] == 112.0
    assert fragmentation.loc["A100", "fragmentation_cost"] == 112.0  # 56 GPU-h x $2


# --- Queues and preemption --------------------------------------------------------------------


def test_queue_usage_against_quota(con):
    filters = data.Filters("demo-a")
    assert data.list_cluster_queues(con, filters)[["cluster_queue", "flavor"]].values.tolist() == [
        ["cq-ml", "a100"], ["cq-ml", "h100"], ["cq-ob", "a100"], ["cq-pl", "h100"]]
    hourly = data.queue_usage_over_time(con, filters, "hour")
    ml_hour0 = hourly[(hourly["cluster_queue"] == "cq-ml")].iloc[0]
    # flavors added up: nominal 4 + 2, ceiling (4 + 4) + (2 + 0), train-1's 8 GPUs, 4 borrowed
    assert (ml_hour0["nominal_quota"], ml_hour0["borrowing_ceiling"], ml_hour0["admitted_gpus"],
            ml_hour0["borrowed_gpus"]) == (6, 10, 8, 4)
    ob = hourly[hourly["cluster_queue"] == "cq-ob"]
    assert ob["borrowing_ceiling"].isna().all()  # no borrowing limit: no ceiling
    daily = data.queue_usage_over_time(con, filters, "day", flavor="h100")
    assert set(daily["cluster_queue"]) == {"cq-ml", "cq-pl"}
    summary = data.queue_usage_summary(con, filters).set_index(["cluster_queue", "flavor"])
    assert summary.loc[("cq-ml", "h100"), "borrowed_gpu_hours"] == 40.0
    assert summary.loc[("cq-pl", "h100"), "peak_admitted_gpus"] == 1.0
    teams = data.queue_usage_over_time(con, data.Filters("demo-a", tenants=("platform",)))
    assert set(teams["cluster_queue"]) == {"cq-pl"}
    assert data.borrowed_by_team(con, filters)["borrowed_gpu_hours"].tolist() == [40.0]
    assert data.queue_usage_over_time(con, data.Filters("demo-b")).empty  # no queues
    holdings = data.cluster_queue_holdings(con, filters, "day")
    assert holdings.groupby("cluster_queue")["gpu_hours"].sum().to_dict() == {
        "cq-ml": 104.0, "cq-ob": 16.0, "cq-pl": 16.0}


def test_queue_pages_survive_a_database_without_the_queue_mart(con, tmp_path, fixture_db):
    import shutil

    import duckdb

    older = tmp_path / "older.duckdb"
    shutil.copy(fixture_db, older)
    with duckdb.connect(str(older)) as rw:
        rw.execute("DROP TABLE fct_queue_usage")
        rw.execute("ALTER TABLE focus_cost_records DROP COLUMN x_Borrowed")
    old = data.connect_read_only(older)
    try:
        filters = data.Filters("demo-a")
        for query in (data.list_cluster_queues, data.queue_usage_summary, data.borrowed_by_team):
            assert query(old, filters).empty
        assert data.queue_usage_over_time(old, filters).empty
        assert not data.cluster_queue_holdings(old, filters).empty
    finally:
        old.close()


def test_preemption_victims_and_loss(con):
    filters = data.Filters("demo-a")
    victims = data.preemption_victims(con, filters)
    assert data.preemption_summary(victims, data.preemption_loss(con, filters)) == {
        "evicted_pods": 1, "victim_workloads": 1, "preemptors": 1, "lost_gpu_hours": 4.0,
        "lost_cost": 8.0}
    assert victims[["workload_id", "tenant", "evicted_pods", "preempted_by", "lost_gpu_hours",
                    "lost_cost"]].to_dict("records") == [
        {"workload_id": "=SUM(A1)", "tenant": "ml-research", "evicted_pods": 1,
         "preempted_by": "gang-2", "lost_gpu_hours": 4.0, "lost_cost": 8.0}]
    assert data.preemption_over_time(con, filters, "day")["lost_cost"].tolist() == [8.0]
    assert data.preemption_victims(con, data.Filters("demo-a", tenants=("platform",))).empty
    none = data.Filters("demo-b")
    assert data.preemption_summary(data.preemption_victims(con, none),
                                   data.preemption_loss(con, none))["evicted_pods"] == 0


def test_preemption_chains_follow_the_victims_filters(con, tmp_path, fixture_db):
    filters = data.Filters("demo-a")
    chains = data.preemption_chains(con, filters)
    assert chains[["chain_id", "origin", "preempted_pods", "depth", "lost_gpu_hours", "lost_cost"]].to_dict(
        "records") == [{"chain_id": 13, "origin": "gang-2", "preempted_pods": 1, "depth": 1,
                        "lost_gpu_hours": 4.0, "lost_cost": 8.0}]
    assert data.preemption_pairs(con, filters)[["preemptor_priority", "victim_priority", "preempted_pods"]
                                               ].to_dict("records") == [
        {"preemptor_priority": 100, "victim_priority": 0, "preempted_pods": 1}]
    assert data.preemption_depths(con, filters)[["depth", "chains"]].to_dict("records") == [{"depth": 1, "chains": 1}]
    # the victim's team, its GPU models (it wanted A100s) and the window decide, as for the victims
    for other in (data.Filters("demo-a", tenants=("platform",)), data.Filters("demo-a", gpu_models=("H100",)),
                  data.Filters("demo-a", date_from=date(2026, 11, 3))):
        assert data.preemption_chains(con, other).empty and data.preemption_pairs(con, other).empty
    assert len(data.preemption_chains(con, data.Filters("demo-a", gpu_models=("A100",)))) == 1

    import shutil

    import duckdb

    older = tmp_path / "older.duckdb"
    shutil.copy(fixture_db, older)
    with duckdb.connect(str(older)) as rw:
        rw.execute("DROP TABLE fct_preemption_cascades")
    old = data.connect_read_only(older)
    try:
        assert not data.has_cascades(old)
        for query in (data.preemption_chains, data.preemption_pairs, data.preemption_depths):
            assert query(old, filters).empty
    finally:
        old.close()


# --- Scenarios, queue position, pods ----------------------------------------------------------


def test_scenarios_side_by_side(con):
    compared = data.scenario_compare(con, data.Filters("demo-a"), "demo-b").set_index("metric")
    assert compared.loc["Total cost", ["baseline", "scenario", "change"]].tolist() == pytest.approx(
        [1536.0, 579.84, -956.16])  # demo-b's CPU cores cost $3.84
    assert compared.loc["Preemptions", "baseline"] == 1.0
    by_team = data.scenario_by_team(con, data.Filters("demo-a"), "demo-b")
    assert by_team.groupby("run_id")["effective_cost"].sum().to_dict() == pytest.approx({
        "demo-a": 368.0, "demo-b": 291.84})
    assert by_team.groupby("run_id")["gpu_hours"].sum().to_dict() == {"demo-a": 136.0,
                                                                     "demo-b": 96.0}
    usage = data.scenario_usage(con, data.Filters("demo-a"), "demo-b")
    assert usage.groupby("run_id")["gpu_hours"].sum().to_dict() == {"demo-a": 576.0,
                                                                     "demo-b": 192.0}


def test_scenarios_ranked_against_a_baseline(con):
    ranking = data.scenario_ranking(con, ("demo-a", "demo-b"), baseline="demo-a")
    assert ranking[["rank", "run_id", "is_baseline"]].values.tolist() == [[1, "demo-b", False],
                                                                          [2, "demo-a", True]]
    assert ranking["total_cost"].tolist() == pytest.approx([579.84, 1536.0])
    assert ranking["total_cost_vs_baseline"].tolist() == pytest.approx([-956.16, 0.0])
    assert ranking["total_cost_vs_baseline_pct"].iloc[0] == pytest.approx(-956.16 / 1536.0)
    a = ranking.set_index("run_id").loc["demo-a"]
    # the same figures as the two-run comparison and the idle-by-cause page
    compared = data.scenario_compare(con, data.Filters("demo-a"), "demo-b").set_index("metric")
    assert a["idle_gpu_hours"] == pytest.approx(compared.loc["Idle GPU-hours", "baseline"])
    assert a["partial_placement_gpu_hours"] == pytest.approx(
        compared.loc["Partial placement (gang_wait) GPU-hours", "baseline"])
    assert a["lost_gpu_hours"] == pytest.approx(compared.loc["Lost to preemption GPU-hours", "baseline"])
    assert a["preemptions"] == 1 and a["p95_wait_h"] == pytest.approx(compared.loc["p95 wait", "baseline"])
    idle = data.idle_cost_by_cause(con, data.Filters("demo-a")).set_index("cause")
    for cause in ("fragmentation", "quota", "gang_barrier", "no_demand"):
        expected = idle["gpu_hours"].get(cause, 0.0)
        assert a[f"idle_{cause}_gpu_hours"] == pytest.approx(expected), cause
    by_finished = data.scenario_ranking(con, ("demo-a", "demo-b"), baseline="demo-b", rank_by="finished")
    assert by_finished["finished"].is_monotonic_decreasing  # higher is better
    common = data.scenario_ranking(con, ("demo-a", "demo-b"), window="common")
    assert (common["total_cost"] <= ranking.set_index("run_id").loc[common["run_id"], "total_cost"].values).all()
    breakdown = data.scenario_cost_breakdown(con, ("demo-a", "demo-b"))
    assert breakdown.groupby("run_id")["effective_cost"].sum().to_dict() == pytest.approx(
        dict(zip(ranking["run_id"], ranking["total_cost"], strict=True)))
    runs = data.scenario_runs(con)
    assert runs["scenario"].isna().all()  # built without a sweep: no scenario table
    for bad in ({"rank_by": "x"}, {"window": "x"}, {"baseline": "nope"}):
        with pytest.raises(DashboardError):
            data.scenario_ranking(con, ("demo-a", "demo-b"), **bad)
    with pytest.raises(DashboardError, match="not in the database"):
        data.scenario_ranking(con, ("demo-a", "x'); DROP TABLE dim_runs; --"))


def test_queue_position_golden(con):
    # gang-2 (cq-ob, submitted hour 1) waits alone at 01:30; at 06:30 big-4 (hour 3, same
    # priority) queues behind it.
    position = data.queue_position(con, "demo-a", "gang-2")
    assert position[["position", "queued"]].values.tolist() == [[1, 1], [1, 2]]
    # big-4's Kueue message says where it stands: that is the answer, not a derivation
    assert data.queue_position(con, "demo-a", "big-4")[["position", "queued", "source"]
                                                        ].values.tolist() == [[2, 2, "kueue"]]
    assert set(position["source"]) == {"derived"}
    assert data.queue_position(con, "demo-a", "train-1").empty  # never pending


def test_workload_pods(con):
    pods = data.workload_pods(con, "demo-a", "=SUM(A1)")
    assert pods[["node", "usage_class", "gpu_hours"]].values.tolist() == [
        ["node-a100-0", "productive", 20.0], ["node-a100-0", "lost_to_preemption", 4.0]]


@pytest.mark.parametrize("value", HOSTILE)
def test_quotes_in_filter_values_are_harmless_on_every_page_query(con, value):
    filters = data.Filters(value, date(2026, 11, 2), date(2026, 11, 3), (value,), (value,))
    for query in (data.idle_by_cause_over_time, data.fragmentation_by_model,
                  data.list_cluster_queues, data.queue_usage_summary, data.borrowed_by_team,
                  data.preemption_victims, data.preemption_over_time,
                  data.cluster_queue_holdings, data.queue_usage_over_time):
        assert query(con, filters).empty, query.__name__
    for policy in data.IDLE_POLICIES:
        assert data.team_showback(con, filters, policy).empty
    assert data.idle_heatmap(con, filters).empty
    assert data.preemption_loss(con, filters) == {"lost_gpu_hours": 0.0, "lost_cost": 0.0}
    assert data.queue_usage_over_time(con, data.Filters("demo-a"), flavor=value).empty
    assert data.queue_position(con, "demo-a", value).empty
    assert data.workload_pods(con, value, value).empty
    assert data.scenario_by_team(con, filters, value)["effective_cost"].sum() == 0
    assert len(data.list_runs(con)) == 2  # the tables are all still there
