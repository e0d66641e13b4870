"""Cost attribution IV, one rule a test, on the hand-made logs of tests/pipeline/scenarios_causes.py:
an idle GPU-hour goes to a cause only where removing that cause would have put it to work, and
pending demand counts only what the cluster could have run. Expected figures are worked out in
each scenario's comment; docs/cost-model.md states the rules.

Prices (tests/pipeline/runs.py): A100 list 2.0 per GPU-hour.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import duckdb
import pytest
from tables import approx_rows, as_dict, idle_by_cause, rows


def assert_close(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys(), actual
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, abs=1e-9), key


def test_pending_demand_is_capped_by_the_idle_of_its_period_and_model(con):
    # hour 0 the node is fully busy: nothing could have run w there
    assert rows(
        con,
        """select workload_id, period_index, gpu_model, gpu_hours, list_value from int_pending_demand_capped
           where run_id = 'pending-busy' order by all""",
    ) == [("w", 1, "A100", 4.0, 8.0)]
    approx_rows(
        rows(
            con,
            """select workload_id, pending_demand_gpu_hours, pending_demand_list_value from fct_workloads
               where run_id = 'pending-busy' and workload_id = 'w'""",
        ),
        [("w", 4.0, 8.0)],
    )
    # never more than the idle of its period and model, anywhere
    assert rows(
        con,
        """with demand as (select run_id, period_index, gpu_model, sum(gpu_hours) as gpu_hours
                           from int_pending_demand_capped group by all),
                idle as (select run_id, period_index, gpu_model, sum(idle_gpu_hours) as idle_gpu_hours
                         from int_node_capacity_periods group by all)
           select d.run_id, d.period_index, d.gpu_model from demand as d
           left join idle as i using (run_id, period_index, gpu_model)
           where d.gpu_hours > coalesce(i.idle_gpu_hours, 0) + 1e-9""",
    ) == []


def charged(con, run_id: str, policy: str) -> dict[str, float]:
    return {
        tenant: value
        for (tenant,), value in as_dict(
            con,
            """select tenant, sum(charged_cost) from fct_chargeback
               where run_id = ? and idle_policy = ? group by all""",
            [run_id, policy],
        ).items()
    }


def test_demand_larger_than_the_free_gpus_is_capacity_shortfall(con):
    # 3 × 8 beside two wholly free 8-GPU nodes: 16 GPU-h an hour, not fragmentation, not latency
    assert_close(idle_by_cause(con, "shortfall"), {("A100", "capacity_shortfall"): 16.0})
    # in the FOCUS records, as an idle reason of its own
    assert rows(
        con,
        """select x_IdleReason, sum(PricingQuantity), sum(EffectiveCost) from focus_cost_records
           where x_RunId = 'shortfall' and x_UsageClass = 'idle' and x_Resource = 'gpu' group by all""",
    ) == [("capacity_shortfall", 16.0, 32.0)]
    # the cause policy leaves it on the platform line, never on the waiting team
    assert charged(con, "shortfall", "cause") == pytest.approx({"__idle__": 32.0, "team-x": 16.0})
    assert charged(con, "shortfall", "window") == pytest.approx({"team-x": 48.0})


def test_fragmentation_only_where_packing_would_place_it_latency_where_it_fits_as_is(con):
    approx_rows(
        rows(
            con,
            """select period_index, idle_reason, sum(gpu_hours) from int_idle_by_cause
               where run_id = 'frag-latency' group by all order by all""",
        ),
        [(0, "fragmentation", 8.0), (1, "no_demand", 4.0), (1, "scheduling_latency", 8.0)],
    )
    # the fit table behind it: pods of 8 that fit, the free GPUs on nodes that fit none, all free
    assert rows(
        con,
        """select start_s, end_s, fit_pods, unfit_free_gpus, free_gpus from int_shape_fit
           where run_id = 'frag-latency' and gpus_per_pod = 8 order by all""",
    ) == [(0.0, 3600.0, 0, 8.0, 8.0), (3600.0, 7200.0, 1, 4.0, 12.0)]


def test_a_wait_kueue_never_admitted_is_a_quota_wait_never_placement(con):
    assert rows(
        con,
        """select workload_id, blocked_by, admitted, start_s, end_s from int_pending_demand
           where run_id = 'not-admitted' order by all""",
    ) == [("w", "quota", False, 0.0, 1800.0)]
    assert_close(idle_by_cause(con, "not-admitted"), {("A100", "quota"): 2.0})


def test_causes_add_up_to_idle_everywhere(con):
    # every node-period of every run: held + every cause = capacity (int_node_capacity_periods)
    assert rows(
        con,
        """with causes as (select run_id, node, period_index, sum(gpu_hours) as gpu_hours
                          from int_idle_by_cause group by all)
           select c.run_id, c.node, c.period_index from int_node_capacity_periods as c
           left join causes as i using (run_id, node, period_index)
           where c.gpu_model is not null
               and abs(coalesce(i.gpu_hours, 0) - c.idle_gpu_hours) > 1e-9""",
    ) == []


def test_the_report_sums_the_marts_periods_inside_its_window(con):
    # w's demand is all in hour 1 (hour 0 was fully busy): a window of hour 0 shows none of it,
    # one of hour 1 all 4 GPU-h (pro-rating its two-hour wait gave 2 and 2)
    from dashboards import data

    start = datetime(2026, 11, 2)
    for window, expected in (((start, start + timedelta(hours=1)), []),
                             ((start + timedelta(hours=1), start + timedelta(hours=2)), [("team-a", 1, 4.0, 8.0)])):
        filters = data.Filters("pending-busy", phase="steady", phase_window=window)
        shown = data.waiting_cost_by_team(con, filters)
        approx_rows(
            [tuple(r) for r in shown[["tenant", "workloads", "pending_demand_gpu_hours",
                                      "pending_demand_list_value"]].itertuples(index=False)],
            expected,
        )
    # the mart's periods add up to fct_workloads' totals
    assert rows(
        con,
        """select w.workload_id from fct_workloads as w
           left join (select run_id, workload_id, sum(gpu_hours) as gpu_hours from fct_pending_demand
                      group by all) as p using (run_id, workload_id)
           where abs(w.pending_demand_gpu_hours - coalesce(p.gpu_hours, 0)) > 1e-9""",
    ) == []


def test_the_waterfall_is_the_registrys(tmp_path, monkeypatch, scenario_dirs, prices_csv):
    # one SQL block per step of pipeline/registry.py's WATERFALL, each calling its fit test
    from pipeline import registry, waterfall
    from pipeline.build import build

    sql = waterfall.waterfall_ctes()
    for n, claim in enumerate(registry.WATERFALL, 1):
        assert f"w{n}_free as (" in sql and f"{claim.fit_test}(free," in sql
    assert f"w{len(registry.WATERFALL) + 1}_free" not in sql
    # drop the capacity_shortfall step: the shortfall run's 16 GPU-h fall through to no_demand
    monkeypatch.setattr(waterfall, "WATERFALL", tuple(
        c for c in registry.WATERFALL if c.cause != "capacity_shortfall"))
    run = next(d for d in scenario_dirs if d.name == "shortfall")
    result = build([run], prices_csv, tmp_path / "db.duckdb", show_progress=False)
    with duckdb.connect(str(result.db), read_only=True) as built:
        assert idle_by_cause(built, "shortfall") == {("A100", "no_demand"): 16.0}
