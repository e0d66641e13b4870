"""Chart builders are pure: DataFrame in, a valid Vega-Lite spec out, fixed colours."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboards import cascade_charts, charts, data, finops_charts, scenario_charts, waiting_charts


@pytest.fixture
def con(fixture_db):
    connection = data.connect_read_only(fixture_db)
    yield connection
    connection.close()


def test_every_builder_produces_a_vega_lite_spec(con):
    filters = data.Filters("demo-a")
    pending = data.pending_workloads(con, filters)
    built = [
        charts.spend_by_team_chart(data.spend_by_team(con, filters)),
        charts.usage_class_over_time_chart(data.usage_class_over_time(con, filters)),
        charts.idle_cost_by_cause_chart(data.idle_cost_by_cause(con, filters)),
        charts.costliest_workloads_chart(data.costliest_workloads(con, filters)),
        charts.workload_timeline_chart(data.workload_timeline(con, "demo-a", "gang-2")),
        charts.pending_by_reason_chart(data.pending_by_reason(pending)),
        charts.team_chargeback_chart(data.team_showback(con, filters, "window", reclaim=True)),
        charts.team_cost_over_time_chart(data.team_cost_over_time(con, filters)),
        charts.idle_by_cause_over_time_chart(data.idle_by_cause_over_time(con, filters)),
        charts.idle_heatmap_chart(data.idle_heatmap(con, filters)),
        charts.fragmentation_by_model_chart(data.fragmentation_by_model(con, filters)),
        waiting_charts.queue_usage_chart(data.queue_usage_over_time(con, filters), "cq-ml"),
        waiting_charts.cluster_queue_holdings_chart(data.cluster_queue_holdings(con, filters)),
        waiting_charts.queue_position_chart(data.queue_position(con, "demo-a", "big-4")),
        waiting_charts.preemption_over_time_chart(data.preemption_over_time(con, filters)),
        waiting_charts.preemption_victims_chart(data.preemption_victims(con, filters)),
        charts.scenario_by_team_chart(data.scenario_by_team(con, filters, "demo-b")),
        charts.runs_compared_chart(data.scenario_usage(con, filters, "demo-b")),
        waiting_charts.workload_gantt_chart(data.workload_pods(con, "demo-a", "=SUM(A1)")),
        scenario_charts.scenario_ranking_chart(data.scenario_cost_breakdown(con, ("demo-a", "demo-b")),
                                      data.scenario_ranking(con, ("demo-a", "demo-b"))),
        scenario_charts.scenario_change_chart(data.scenario_ranking(con, ("demo-a", "demo-b")), "p95_wait_h", "p95 wait"),
        finops_charts.unservable_demand_chart(data.unservable_demand(con, filters)),
        finops_charts.idle_by_payment_chart(data.idle_by_payment(con, filters)),
        finops_charts.commitment_pools_chart(data.commitment_pools(con, "demo-a")),
        finops_charts.waiting_cost_chart(data.waiting_cost_by_team(con, filters)),
        finops_charts.eviction_losses_chart(data.eviction_losses(con, filters)),
        finops_charts.training_run_costs_chart(data.training_run_costs(con, filters)),
        cascade_charts.priority_pairs_chart(data.preemption_pairs(con, filters)),
        cascade_charts.depth_chart(data.preemption_depths(con, filters)),
        cascade_charts.chains_chart(data.preemption_chains(con, filters)),
    ]
    for chart in built:
        spec = chart.to_dict()
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_usage_class_colours_are_fixed_whatever_the_data():
    only_idle = pd.DataFrame({"period_start": pd.to_datetime(["2026-11-02"]),
                              "usage_class": ["idle"], "gpu_hours": [3.0]})
    scale = charts.usage_class_over_time_chart(only_idle).to_dict()["encoding"]["color"]["scale"]
    assert scale["domain"] == ["productive", "gang_wait", "lost_to_preemption", "idle"]
    assert dict(zip(scale["domain"], scale["range"], strict=True)) == charts.USAGE_CLASS_COLORS


def test_empty_frames_still_build():
    empty = pd.DataFrame({"tenant": [], "effective_cost": []})
    assert charts.spend_by_team_chart(empty).to_dict()["mark"]["type"] == "bar"


def test_idle_team_is_always_grey_and_bars_span_their_period(con):
    frame = data.team_cost_over_time(con, data.Filters("demo-a"), "day")
    spec = charts.team_cost_over_time_chart(frame).to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"], strict=True))["__idle__"] == "#9e9e9e"
    assert spec["encoding"]["x2"]["field"] == "period_end"  # a day-wide bar, not a hairline


def test_timeline_labels_only_where_the_reason_changes():
    events = pd.DataFrame({
        "ts": pd.date_range("2026-11-02", periods=5, freq="h"),
        "event": ["submitted", "pending", "pending", "pending", "started"],
        "reason": [None, "GangNotSatisfiable", "GangNotSatisfiable", "Unschedulable", None],
        "message": [""] * 5,
    })
    values = charts.workload_timeline_chart(events).to_dict()["datasets"]
    labels = [row["label"] for row in next(iter(values.values()))]
    assert labels == ["submitted", "GangNotSatisfiable", "", "Unschedulable", "started"]


@pytest.mark.parametrize(("frame", "mark", "x_field"), [
    (pd.DataFrame({"week": pd.to_datetime(["2026-11-02", "2026-11-09"]), "team": ["a", "b"],
                   "gpu_hours": [1.0, 2.0], "effective_cost": [3.0, 4.0]}), "line", "label"),
    (pd.DataFrame({"run_id": ["r", "r"], "team": ["a", "b"], "usd": [1.0, 2.0]}), "bar", "value"),
])
def test_auto_chart_for_ad_hoc_results(frame, mark, x_field):
    spec = charts.auto_chart(frame).to_dict()
    assert spec["mark"]["type"] == mark
    assert spec["encoding"]["x"]["field"] == x_field
    assert charts.auto_chart(pd.DataFrame({"only_text": ["a"]})) is None
    assert charts.auto_chart(pd.DataFrame({"a": ["x"], "b": ["y"]})) is None


def test_scenario_ranking_chart_orders_by_rank_and_marks_the_baseline(con):
    ranking = data.scenario_ranking(con, ("demo-a", "demo-b"), baseline="demo-a")
    spec = scenario_charts.scenario_ranking_chart(data.scenario_cost_breakdown(con, ("demo-a", "demo-b")), ranking).to_dict()
    bars, rule = spec["layer"]
    assert bars["encoding"]["y"]["sort"] == ["1. demo-b", "2. demo-a (baseline)"]  # cheapest on top
    assert rule["mark"]["strokeDash"] == [6, 4]  # at demo-a's total
    assert any(row.get("baseline") == pytest.approx(1536.0) for rows in spec["datasets"].values() for row in rows)


def _drawn_until(spec: dict, field: str = "period_start") -> pd.Timestamp:
    rows = [row for rows in spec["datasets"].values() for row in rows]
    return max(pd.Timestamp(row[field]) for row in rows)


@pytest.mark.parametrize(("builder", "series"), [
    (charts.usage_class_over_time_chart, "usage_class"),
    (charts.idle_by_cause_over_time_chart, "cause"),
])
def test_step_charts_draw_their_last_period_to_its_end(builder, series):
    # a 2-hour window: step-after areas end at their last row's x, so the last hour was not drawn
    frame = pd.DataFrame({"period_start": pd.to_datetime(["2026-11-02 00:00", "2026-11-02 01:00"] * 2),
                          series: ["a", "a", "b", "b"], "gpu_hours": [8.0, 6.0, 2.0, 4.0]})
    spec = builder(frame).to_dict()
    assert _drawn_until(spec) == pd.Timestamp("2026-11-02 02:00")
    one_day = pd.DataFrame({"period_start": pd.to_datetime(["2026-11-08", "2026-11-09"]),
                            series: ["a", "a"], "gpu_hours": [1.0, 2.0]})
    assert _drawn_until(builder(one_day).to_dict()) == pd.Timestamp("2026-11-10")


def test_a_faceted_ad_hoc_chart_has_panels_of_a_width_in_pixels():
    # a fit-to-container width on a facet is drawn zero pixels wide (the SQL page's blank gap)
    frame = pd.DataFrame({"run_id": ["r1", "r1", "r2", "r2"], "team": ["a", "b", "a", "b"],
                          "usd": [1.0, 2.0, 3.0, 4.0]})
    spec = charts.auto_chart(frame, width="container").to_dict()
    assert "facet" in spec and isinstance(spec["spec"]["width"], int) and spec["spec"]["width"] > 0


def test_timeline_labels_on_one_lane_never_run_into_each_other():
    # over 10 h, "WaitingForPreemptedWorkloads" (28 characters, about 180 px of an 800 px chart)
    # spans about 2.3 h: a reason 1 h later on its lane is left unlabelled, one 3 h later is not
    times = pd.to_datetime(["2026-11-02 00:00", "2026-11-02 01:00", "2026-11-02 04:00", "2026-11-02 10:00"])
    events = pd.DataFrame({"ts": times, "event": ["pending"] * 3 + ["started"],
                           "reason": ["WaitingForPreemptedWorkloads", "NoMatchingFlavor", "WaitingForQuota", None],
                           "message": [""] * 4})
    values = charts.workload_timeline_chart(events).to_dict()["datasets"]
    labels = [row["label"] for row in next(iter(values.values()))]
    assert labels == ["WaitingForPreemptedWorkloads", "", "WaitingForQuota", "started"]


def test_the_costliest_workloads_chart_names_every_bar():
    frame = pd.DataFrame({"workload_id": [f"training-{i:05d}" for i in range(25)], "tenant": ["a"] * 25,
                          "effective_cost": [float(100 - i) for i in range(25)]})
    spec = charts.costliest_workloads_chart(frame).to_dict()
    assert spec["encoding"]["y"]["axis"]["labelOverlap"] is False
    assert spec["height"] >= 20 * 25


def test_device_profile_chart_colours_fragmentation_as_its_idle_cause():
    from dashboards import partition_charts

    frame = pd.DataFrame({"gpu_model": ["H100", "H100", "H100"],
                          "device_profile": ["1g.10gb", "whole", data.FRAGMENTATION_LABEL],
                          "usage": ["workload", "workload", "partition_fragmentation"],
                          "gpu_share": [0.142, 1.0, None], "gpu_hours": [1.136, 4.0, 2.864],
                          "effective_cost": [4.544, 16.0, 11.456]})
    spec = partition_charts.device_profile_cost_chart(frame).to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"] == ["used by workloads", "idle: partition fragmentation"]
    assert scale["range"][1] == charts.IDLE_CAUSE_COLORS["partition_fragmentation"]
    assert spec["encoding"]["x"]["field"] == "effective_cost"


def test_a_run_without_dra_has_no_device_profile_rows(con):
    assert data.device_profile_cost(con, data.Filters(run_id="demo-a")).empty
