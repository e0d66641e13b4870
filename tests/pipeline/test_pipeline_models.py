"""Each intermediate and mart model against hand-computed rows for the scenarios."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pytest


@pytest.fixture(scope="module")
def con(built):
    connection = duckdb.connect(str(built.db), read_only=True)
    yield connection
    connection.close()


def rows(con, sql, params=None):
    return con.execute(sql, params or []).fetchall()


def approx_rows(actual, expected):
    assert len(actual) == len(expected), actual
    for got, want in zip(actual, expected, strict=True):
        assert got == tuple(pytest.approx(v) if isinstance(v, float) else v for v in want)


def test_int_pod_intervals_classify_every_held_second(con):
    actual = rows(
        con,
        """select run_id, workload_id, pod_index, start_s, end_s, usage_class, gpus
           from int_pod_intervals order by run_id, workload_id, pod_index, start_s""",
    )
    assert actual == [
        ("finished-gang", "w1", 0, 0.0, 1800.0, "productive", 4.0),
        ("finished-gang", "w1", 1, 0.0, 1800.0, "productive", 4.0),
        ("fractional", "w1", 0, 0.0, 3600.0, "productive", 0.25),
        ("fractional", "w2", 0, 0.0, 3600.0, "productive", 0.5),
        # cut at the horizon
        ("past-horizon", "w1", 0, 3600.0, 7200.0, "productive", 8.0),
        # the gang never reached min_count: all partial-placement waste
        ("pod-by-pod", "w1", 0, 100.0, 1300.0, "gang_wait", 4.0),
        ("pod-by-pod", "w1", 1, 200.0, 1300.0, "gang_wait", 4.0),
        # checkpoint every 600 s: the last before the eviction at 2000 is 1800
        ("preempted", "w1", 0, 0.0, 1800.0, "productive", 2.0),
        ("preempted", "w1", 0, 1800.0, 2000.0, "lost_to_preemption", 2.0),
        ("preempted", "w2", 0, 2000.0, 5000.0, "productive", 6.0),
        # reserved at 0, gang complete at 600
        ("reserved", "w1", 0, 0.0, 600.0, "gang_wait", 2.0),
        ("reserved", "w1", 0, 600.0, 4200.0, "productive", 2.0),
        ("reserved", "w1", 1, 600.0, 4200.0, "productive", 2.0),
    ]


def test_int_pod_holdings_cut_open_pods_at_horizon(con):
    assert rows(
        con,
        "select hold_start_s, end_s, end_event, open_at_horizon from int_pod_holdings "
        "where run_id = 'past-horizon'",
    ) == [(3600.0, 7200.0, None, True)]


def test_int_gang_progress(con):
    assert rows(
        con,
        """select run_id, workload_id, attempt, min_count, first_start_s, progress_start_s
           from int_gang_progress order by all""",
    ) == [
        ("finished-gang", "w1", 0, 2, 0.0, 0.0),
        ("fractional", "w1", 0, 1, 0.0, 0.0),
        ("fractional", "w2", 0, 1, 0.0, 0.0),
        ("past-horizon", "w1", 0, 1, 3600.0, 3600.0),
        ("pod-by-pod", "w1", 0, 3, 100.0, None),
        ("preempted", "w1", 0, 1, 0.0, 0.0),
        ("preempted", "w2", 0, 1, 2000.0, 2000.0),
        ("reserved", "w1", 0, 2, 600.0, 600.0),
    ]


def test_int_hourly_usage_splits_at_the_hour(con):
    approx_rows(
        rows(
            con,
            """select period_index, pod_index, usage_class, held_s, gpu_hours
               from int_hourly_usage where run_id = 'reserved' order by all""",
        ),
        [
            (0, 0, "gang_wait", 600.0, 2 * 600 / 3600),
            (0, 0, "productive", 3000.0, 2 * 3000 / 3600),
            (0, 1, "productive", 3000.0, 2 * 3000 / 3600),
            (1, 0, "productive", 600.0, 2 * 600 / 3600),
            (1, 1, "productive", 600.0, 2 * 600 / 3600),
        ],
    )


def test_int_node_capacity_periods_fractional_sharing(con):
    approx_rows(
        rows(
            con,
            """select period_index, capacity_gpu_hours, held_gpu_hours, idle_gpu_hours
               from int_node_capacity_periods where run_id = 'fractional' order by all""",
        ),
        [(0, 1.0, 0.75, 0.25), (1, 1.0, 0.0, 1.0)],
    )


def test_int_pending_demand(con):
    assert rows(
        con,
        """select run_id, workload_id, gpu_model, start_s, end_s, demand_gpus
           from int_pending_demand where run_id in ('preempted', 'pod-by-pod') order by all""",
    ) == [
        ("pod-by-pod", "w1", "A100", 0.0, 100.0, 12.0),
        ("pod-by-pod", "w1", "A100", 1300.0, 7200.0, 12.0),
        # w1 submitted and started at 0: a zero-length wait is no wait
        ("preempted", "w1", "A100", 2000.0, 7200.0, 2.0),
        ("preempted", "w2", "A100", 1990.0, 2000.0, 6.0),
    ]


def test_int_idle_by_cause_fragmentation_vs_no_demand(con):
    actual = {
        (run, period, reason): hours
        for run, period, reason, hours in rows(
            con,
            "select run_id, period_index, idle_reason, gpu_hours from int_idle_by_cause",
        )
    }
    expected = {
        # nobody waits: all idle is no_demand
        ("finished-gang", 0, "fragmentation"): 0.0,
        ("finished-gang", 0, "no_demand"): 4.0,
        # w2 waits 10 s for 6 free GPUs, then w1 waits for 2 with 2 free until w2 ends
        ("preempted", 0, "fragmentation"): (6 * 10 + 2 * 1600) / 3600,
        ("preempted", 0, "no_demand"): 8 - 2 * 2000 / 3600 - 6 * 1600 / 3600 - (6 * 10 + 2 * 1600) / 3600,
        ("preempted", 1, "fragmentation"): (2 * 1400 + 2 * 2200) / 3600,
        # the 3-pod gang waits for 12 GPUs: 8 free before it starts and after it times out
        ("pod-by-pod", 0, "fragmentation"): (8 * 100 + 8 * 2300) / 3600,
        ("pod-by-pod", 0, "no_demand"): 4 * 100 / 3600,
        ("pod-by-pod", 1, "fragmentation"): 8.0,
        ("pod-by-pod", 1, "no_demand"): 0.0,
        ("past-horizon", 0, "fragmentation"): 8 * 600 / 3600,
        ("fractional", 0, "no_demand"): 0.25,
    }
    for key, hours in expected.items():
        assert actual[key] == pytest.approx(hours, abs=1e-12), key


def test_dim_runs_and_dim_nodes(con):
    assert rows(con, "select * from dim_runs where run_id = 'reserved'") == [
        ("reserved", "kube-default", 1, datetime(2026, 11, 2), datetime(2026, 11, 2, 2), 7200.0, 1, 8, 1, 2)
    ]
    assert rows(con, "select * from dim_nodes where run_id = 'fractional'") == [
        ("fractional", "n1", "T4", 1, "z1", "b1", "r1", "Dynamic")
    ]


def test_fct_workloads(con):
    actual = rows(
        con,
        """select run_id, workload_id, final_state, wait_s, preemptions, timeouts,
                  partial_placement, gpu_hours_productive, gpu_hours_gang_wait, gpu_hours_lost,
                  effective_cost, cluster_queue
           from fct_workloads order by run_id, workload_id""",
    )
    approx_rows(
        actual,
        [
            ("finished-gang", "w1", "finished", 0.0, 0, 0, False, 4.0, 0.0, 0.0, 8.0, "cq-a"),
            ("fractional", "w1", "finished", 0.0, 0, 0, False, 0.25, 0.0, 0.0, 0.25 * 0.2, None),
            ("fractional", "w2", "finished", 0.0, 0, 0, False, 0.5, 0.0, 0.0, 0.5 * 0.2, None),
            ("past-horizon", "w1", "running_at_end", 600.0, 0, 0, False, 8.0, 0.0, 0.0, 16.0, None),
            ("pod-by-pod", "w1", "pending_at_end", 100.0, 0, 1, True, 0.0, 4 * 2300 / 3600, 0.0,
             2 * 4 * 2300 / 3600, None),
            ("preempted", "w1", "pending_at_end", 0.0, 1, 0, False, 1.0, 0.0, 400 / 3600,
             2 * (1.0 + 400 / 3600), None),
            ("preempted", "w2", "finished", 10.0, 0, 0, False, 6 * 3000 / 3600, 0.0, 0.0,
             2 * 6 * 3000 / 3600, None),
            # Committed H100: contracted price 3.0
            ("reserved", "w1", "finished", 600.0, 0, 0, False, 4.0, 2 * 600 / 3600, 0.0,
             3.0 * (4.0 + 2 * 600 / 3600), None),
        ],
    )


def test_fct_workload_timeline(con):
    timeline = rows(
        con,
        """select seq, ts, event, pod_index, node, reason from fct_workload_timeline
           where run_id = 'preempted' and workload_id = 'w1' order by seq""",
    )
    assert timeline == [
        (0, datetime(2026, 11, 2, 0, 0), "submitted", None, None, None),
        (1, datetime(2026, 11, 2, 0, 0), "started", 0, "n1", None),
        (4, datetime(2026, 11, 2, 0, 33, 20), "preempted", 0, "n1", "preempted-by:w2"),
        (5, datetime(2026, 11, 2, 0, 33, 20), "requeued", None, None, None),
        (7, datetime(2026, 11, 2, 0, 33, 20), "pending", None, None, "Unschedulable"),
    ]


def test_fct_pod_intervals_timestamps(con):
    assert rows(
        con,
        "select * from fct_pod_intervals where run_id = 'preempted' and workload_id = 'w1' "
        "order by start_ts",
    ) == [
        ("preempted", "w1", 0, "n1", "A100", 2.0, datetime(2026, 11, 2), datetime(2026, 11, 2, 0, 30),
         "productive"),
        ("preempted", "w1", 0, "n1", "A100", 2.0, datetime(2026, 11, 2, 0, 30),
         datetime(2026, 11, 2, 0, 33, 20), "lost_to_preemption"),
    ]


def test_fct_usage_hourly(con):
    approx_rows(
        rows(
            con,
            """select charge_period_start, tenant, gpu_model, usage_class, idle_reason, gpu_hours,
                      effective_cost, list_cost
               from fct_usage_hourly where run_id = 'fractional' order by all""",
        ),
        [
            (datetime(2026, 11, 2, 0), "__idle__", "T4", "idle", "no_demand", 0.25, 0.05, 0.125),
            (datetime(2026, 11, 2, 0), "team-a", "T4", "productive", None, 0.25, 0.05, 0.125),
            (datetime(2026, 11, 2, 0), "team-b", "T4", "productive", None, 0.5, 0.1, 0.25),
            (datetime(2026, 11, 2, 1), "__idle__", "T4", "idle", "no_demand", 1.0, 0.2, 0.5),
        ],
    )


def test_focus_cost_records_values(con):
    record = con.execute(
        """select * from focus_cost_records
           where x_RunId = 'reserved' and x_UsageClass = 'gang_wait'"""
    ).fetchone()
    columns = [d[0] for d in con.description]
    row = dict(zip(columns, record, strict=True))
    assert row["ConsumedQuantity"] == pytest.approx(2 * 600 / 3600)
    assert row["PricingCategory"] == "Committed"
    assert row["ListUnitPrice"] == 4.0 and row["ContractedUnitPrice"] == 3.0
    assert row["ListCost"] == row["ListUnitPrice"] * row["PricingQuantity"]
    assert row["BilledCost"] == row["EffectiveCost"] == row["ContractedCost"]
    assert row["ResourceId"] == "k8s://reserved/node/n1"
    assert row["SkuId"] == "gpu-h100" and row["SkuPriceId"] == "gpu-h100-committed"
    assert row["SubAccountId"] == "k8s://reserved/namespace/team-c"
    assert row["ChargePeriodStart"] == datetime(2026, 11, 2, 0)
    assert row["ChargePeriodEnd"] == datetime(2026, 11, 2, 1)
    assert row["BillingPeriodStart"] == datetime(2026, 11, 1)
    assert row["BillingPeriodEnd"] == datetime(2026, 12, 1)
    assert row["InvoiceId"] == "INV-reserved-2026-11"
    assert row["x_Workload"] == "w1" and row["x_Tenant"] == "team-c"
    assert row["x_IdleReason"] is None and row["CommitmentDiscountStatus"] is None
    assert columns[49] == "x_RunId" and len(columns) == 60
