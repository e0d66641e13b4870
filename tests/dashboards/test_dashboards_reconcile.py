"""Every page's figures against its headline, on the demo's own database: the parts each page
shows add up to the whole it shows, over the same window (the phase and dates of the sidebar),
and no sub-total exceeds its total. The queries are the ones the pages call."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dashboards import data, labels

pytestmark = pytest.mark.slow

CENT = 0.01
TENTH_GPU_HOUR = 0.1


@pytest.fixture(scope="module")
def con(demo_db):
    connection = data.connect_read_only(demo_db)
    yield connection
    connection.close()


@pytest.fixture(scope="module", params=["steady", None, "drain"], ids=["steady", "whole-run", "drain"])
def windows(request, con):
    """The sidebar's default selection (steady phase, all dates) and other phases, every run."""
    runs = data.list_runs(con)["run_id"].tolist()
    assert len(runs) >= 2
    return [data.with_phase(con, data.Filters(run), request.param) for run in runs]


def test_overview_total_is_teams_plus_unallocated_idle(con, windows):
    for filters in windows:
        metrics = data.headline_metrics(con, filters)
        spend = data.spend_by_team(con, filters)
        assert float(spend["effective_cost"].sum()) + metrics["idle_cost"] == pytest.approx(
            metrics["total_cost"], abs=CENT)
        # the usage chart over time covers the whole capacity of the window
        usage = data.usage_class_over_time(con, filters, data.pick_time_bucket(filters, None))
        assert float(usage["gpu_hours"].sum()) == pytest.approx(metrics["capacity_gpu_hours"], abs=TENTH_GPU_HOUR)
        # idle causes (idle rows) add up to the idle figure; partial placement to its figure
        causes = data.idle_cost_by_cause(con, filters)
        idle = causes[causes["usage_class"] == "idle"]
        assert float(idle["effective_cost"].sum()) == pytest.approx(metrics["idle_cost"], abs=CENT)
        gang = causes[causes["usage_class"] == "gang_wait"]
        assert float(gang["gpu_hours"].sum()) == pytest.approx(metrics["partial_placement_gpu_hours"],
                                                                abs=TENTH_GPU_HOUR)
        partial = data.partial_placement_workloads(con, filters)
        assert float(partial["gang_wait_gpu_hours"].sum()) == pytest.approx(
            metrics["partial_placement_gpu_hours"], abs=TENTH_GPU_HOUR)
        # sub-totals never exceed their totals: training runs with the idle they carry are part
        # of the teams' charged cost under the window policy (the chargeback's rule)
        training = data.training_run_costs(con, filters)
        teams_spend = float(spend["effective_cost"].sum())
        charged = data.team_showback(con, filters, "window")
        teams_charged = float(charged.loc[charged["tenant"] != data.IDLE_TENANT, "charged_cost"].sum())
        assert float(training["total_cost"].sum()) <= teams_charged + CENT
        assert float((training["usage_cost_per_run"] * training["runs"]).sum()) <= teams_spend + CENT
        costliest = data.costliest_workloads(con, filters)
        assert float(costliest["effective_cost"].sum()) <= teams_spend + CENT


def test_teams_charged_plus_unallocated_is_the_overview_total(con, windows):
    for filters in windows:
        total = data.headline_metrics(con, filters)["total_cost"]
        for policy in data.IDLE_POLICIES:
            for reclaim in (False, True):
                showback = data.team_showback(con, filters, policy, reclaim)
                assert float(showback["charged_cost"].sum()) == pytest.approx(total, abs=CENT), policy
                over_time = data.team_cost_over_time(con, filters, "day", policy, reclaim)
                assert float(over_time["charged_cost"].sum()) == pytest.approx(total, abs=CENT), policy


def test_teams_cost_of_delay_sums_the_windows_periods(con, windows):
    """Cost of delay is not spend: it is never compared with the bill, but it covers the page's
    window (the charge periods of fct_pending_demand inside it): the steady phase's share is at
    most the whole run's, team by team."""
    for filters in windows:
        whole = data.waiting_cost_by_team(con, replace(filters, phase=None, phase_window=None))
        part = data.waiting_cost_by_team(con, filters)
        whole_by_team = dict(zip(whole["tenant"], whole["pending_demand_list_value"], strict=True))
        for team, cost in zip(part["tenant"], part["pending_demand_list_value"], strict=True):
            assert cost <= whole_by_team[team] + CENT


def test_idle_page_causes_payment_and_fragmentation_add_up(con, windows):
    for filters in windows:
        metrics = data.headline_metrics(con, filters)
        over_time = data.idle_by_cause_over_time(con, filters, "day")
        idle_rows = over_time[over_time["cause"] != "gang_wait (partial placement)"]
        assert float(idle_rows["gpu_hours"].sum()) == pytest.approx(metrics["idle_gpu_hours"], abs=TENTH_GPU_HOUR)
        payment = data.idle_by_payment(con, filters)
        assert float(payment["effective_cost"].sum()) == pytest.approx(metrics["idle_cost"], abs=CENT)
        causes = data.idle_cost_by_cause(con, filters)
        by_cause = dict(zip(causes["cause"], causes["gpu_hours"], strict=True))
        fragmentation = data.fragmentation_by_model(con, filters)
        assert float(fragmentation["fragmentation_gpu_hours"].sum()) == pytest.approx(
            by_cause.get("fragmentation", 0.0), abs=TENTH_GPU_HOUR)


def test_preemption_victims_add_up_to_the_lost_work(con, windows):
    for filters in windows:
        victims = data.preemption_victims(con, filters)
        loss = data.preemption_loss(con, filters)
        assert float(victims["lost_cost"].sum()) == pytest.approx(loss["lost_cost"], abs=CENT)
        assert float(victims["lost_gpu_hours"].sum()) == pytest.approx(loss["lost_gpu_hours"], abs=TENTH_GPU_HOUR)
        over_time = data.preemption_over_time(con, filters, "day")
        assert float(over_time["lost_cost"].sum()) == pytest.approx(loss["lost_cost"], abs=CENT)


def test_pending_is_judged_at_the_end_of_the_window_shown(con, windows):
    for filters in windows:
        end = filters.params()["ts_to"]
        pending = data.pending_workloads(con, filters)
        assert int(data.pending_by_reason(pending)["workloads"].sum()) == len(pending)
        for workload in pending["workload_id"].head(50):
            details = data.workload_details(con, filters.run_id, workload)
            assert details is not None
            # waiting at the window's end: not finished by then
            finished_by_then = details["final_state"] == "finished" and end is not None \
                and details["end_ts"] <= end
            assert not finished_by_then, workload


def test_scenarios_breakdown_adds_up_to_each_runs_total(con):
    runs = tuple(data.scenario_runs(con)["run_id"])
    for window in data.WINDOWS:
        ranking = data.scenario_ranking(con, runs, None, "total_cost", window)
        breakdown = data.scenario_cost_breakdown(con, runs, window)
        totals = breakdown.groupby("run_id")["effective_cost"].sum().to_dict()
        for run, total in zip(ranking["run_id"], ranking["total_cost"], strict=True):
            assert totals[run] == pytest.approx(total, abs=CENT)


def test_no_internal_name_survives_the_labels(con, windows):
    for filters in windows:
        shown = labels.readable_values(data.team_showback(con, filters, "separate", False))
        assert data.IDLE_TENANT not in set(shown["tenant"])
        assert labels.PLATFORM_LINE in set(shown["tenant"])
        for frame in (data.idle_cost_by_cause(con, filters), data.training_run_costs(con, filters)):
            for column in set(labels.LABELLED_COLUMNS) & set(frame.columns):
                assert not any("_" in str(v) for v in labels.readable_values(frame)[column]), column
