"""Each mart against hand-computed tables for the scenarios (tests/pipeline/scenarios.py).

Prices (tests/pipeline/runs.py): A100 list 2.0 / contracted 1.5 / spot 0.8, H100 4.0 / 3.0 / 1.25,
T4 0.5 / 0.4 / 0.2 per GPU-hour; CPU 0.04 per core-hour, memory 0.005 per GiB-hour (list).
"""

from __future__ import annotations

from datetime import datetime

import pytest
from tables import approx_rows, rows

ORIGINAL_RUNS = "('finished-gang', 'fractional', 'past-horizon', 'pod-by-pod', 'preempted', 'reserved')"
H0, H1, H2 = datetime(2026, 11, 2, 0), datetime(2026, 11, 2, 1), datetime(2026, 11, 2, 2)
NOVEMBER = datetime(2026, 11, 1)


def test_dim_runs_and_dim_nodes(con):
    # one submission, at 0: no warm-up, steady through hour 0, drain from hour 1
    assert rows(con, "select * from dim_runs where run_id = 'reserved'") == [
        ("reserved", "kube-default", 1, H0, H2, 7200.0, 1, 8, 1, 2, H0, H0, H0, H1)
    ]
    assert rows(con, "select * from dim_nodes where run_id in ('fractional', 'cpu-memory') order by all") == [
        ("cpu-memory", "c1", None, 0, "z1", "b1", "r2", "Standard", 16.0, 64.0),
        ("cpu-memory", "g1", "A100", 8, "z1", "b1", "r1", "Standard", 32.0, 256.0),
        ("fractional", "n1", "T4", 1, "z1", "b1", "r1", "Dynamic", 0.0, 0.0),
    ]


def test_fct_workloads(con):
    actual = rows(
        con,
        f"""select run_id, workload_id, final_state, wait_s, preemptions, timeouts,
                  partial_placement, gpu_hours_productive, gpu_hours_gang_wait, gpu_hours_lost,
                  effective_cost, cluster_queue
           from fct_workloads where run_id in {ORIGINAL_RUNS} order by run_id, workload_id""",
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


def test_fct_workloads_cost_per_workload(con):
    approx_rows(
        rows(
            con,
            """select run_id, workload_id, list_cost, productive_cost, gang_wait_cost,
                      preemption_waste_cost, cpu_memory_cost, gpu_hours_borrowed, attempts,
                      cost_per_useful_gpu_hour
               from fct_workloads
               where (run_id, workload_id) in (('preempted', 'w1'), ('kueue', 'w2'),
                   ('cpu-memory', 'w1'), ('pod-by-pod', 'w1'), ('reserved', 'w1'))
               order by all""",
        ),
        [
            # 2 GPUs, 8 cores, 64 GiB for an hour: 4.0 + 0.32 + 0.32
            ("cpu-memory", "w1", 4.64, 4.64, 0.0, 0.0, 0.64, 0.0, 1, 4.64 / 2.0),
            # admitted Borrowing: it carries cq-a's GPU-hours above nominal in hour 0 (all of its own)
            ("kueue", "w2", 8.0, 8.0, 0.0, 0.0, 0.0, 4 * 3000 / 3600, 1, 2.0),
            # nothing productive: no cost per useful GPU-hour
            ("pod-by-pod", "w1", 2 * 4 * 2300 / 3600, 0.0, 2 * 4 * 2300 / 3600, 0.0, 0.0, 0.0, 1, None),
            ("preempted", "w1", 2 * (1.0 + 400 / 3600), 2.0, 0.0, 2 * 400 / 3600, 0.0, 0.0, 1,
             2 * (1.0 + 400 / 3600)),
            # list 4.0, contracted 3.0 on the Committed node
            ("reserved", "w1", 4.0 * (4.0 + 2 * 600 / 3600), 12.0, 3.0 * 2 * 600 / 3600, 0.0, 0.0,
             0.0, 1, 3.0 * (4.0 + 2 * 600 / 3600) / 4.0),
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
            """select * from fct_usage_hourly where run_id = 'fractional' order by all""",
        ),
        [
            # a spot node (Dynamic): its idle can be given back
            ("fractional", H0, "__idle__", "T4", "idle", "shared_device_slack", 0.25, 0.05, 0.125, "gpu", 0.25,
             "GPU-Hours", "steady", "Dynamic"),
            ("fractional", H0, "team-a", "T4", "productive", None, 0.25, 0.05, 0.125, "gpu", 0.25, "GPU-Hours",
             "steady", "Dynamic"),
            ("fractional", H0, "team-b", "T4", "productive", None, 0.5, 0.1, 0.25, "gpu", 0.5, "GPU-Hours",
             "steady", "Dynamic"),
            # after the hour of the last submission: the drain
            ("fractional", H1, "__idle__", "T4", "idle", "no_demand", 1.0, 0.2, 0.5, "gpu", 1.0, "GPU-Hours",
             "drain", "Dynamic"),
        ],
    )
    # CPU and memory rows carry no GPU-hours; their quantity is in their own unit
    approx_rows(
        rows(
            con,
            """select tenant, resource, gpu_hours, effective_cost, quantity, unit from fct_usage_hourly
               where run_id = 'cpu-memory' and tenant = 'team-a' order by all""",
        ),
        [
            ("team-a", "cpu", 0.0, 0.32, 8.0, "Core-Hours"),
            ("team-a", "gpu", 2.0, 4.0, 2.0, "GPU-Hours"),
            ("team-a", "memory", 0.0, 0.32, 64.0, "GiB-Hours"),
        ],
    )
    # commitment purchases are not usage
    assert rows(con, "select count(*) from fct_usage_hourly where usage_class = 'commitment_purchase'") == [(0,)]


def test_fct_queue_usage(con):
    approx_rows(
        rows(con, "select * from fct_queue_usage where run_id = 'kueue' order by all"),
        [
            # w1 (4) all hour, w2 (4, Borrowing) from 600: above the nominal 4 from 600 on
            ("kueue", "cq-a", "cohort-1", "a100", H0, (4 * 600 + 8 * 3000) / 3600, 4.0, 4.0,
             4 * 3000 / 3600, H1, None, 4 * 3000 / 3600, (4 * 600 + 8 * 3000) / 3600, 4 * 3000 / 3600, 2,
             0.0),
            # w2 alone until 4200: flagged Borrowing, but within the nominal quota now; the queue
            # leaves its whole quota to others from 4200
            ("kueue", "cq-a", "cohort-1", "a100", H1, 4 * 600 / 3600, 4.0, 4.0, 0.0, H2, None,
             4 * 600 / 3600, 4 * 600 / 3600, 0.0, 0, 4 * 3000 / 3600),
            # w3 never admitted: the queue holds nothing, its 4 GPUs of quota unused
            ("kueue", "cq-b", "cohort-1", "a100", H0, 0.0, 4.0, 0.0, 0.0, H1, None, 0.0, 0.0, 0.0, 0, 4.0),
            ("kueue", "cq-b", "cohort-1", "a100", H1, 0.0, 4.0, 0.0, 0.0, H2, None, 0.0, 0.0, 0.0, 0, 4.0),
        ],
    )
    # without cluster_queues.parquet: admitted GPUs known, quota and borrowing unknown
    assert rows(
        con,
        "select cluster_queue, flavor, admitted_gpus, nominal_quota, borrowed_gpus from fct_queue_usage "
        "where run_id = 'finished-gang' order by charge_period_start",
    ) == [("cq-a", None, 4.0, None, None), ("cq-a", None, 0.0, None, None)]


def test_fct_showback_idle_separate_or_shared_by_cost(con):
    approx_rows(
        rows(
            con,
            """select tenant, gpu_hours, list_cost, productive_cost, cost_idle_separate, idle_share,
                      cost_idle_shared
               from fct_showback where run_id = 'fractional' order by tenant""",
        ),
        [
            # hour 1's idle T4 ($0.2): nobody used the T4 then, so nobody is charged for it
            ("__idle__", 1.25, 0.625, 0.0, 0.25, 0.0, 0.2),
            # hour 0's $0.05 of idle shared 1:2 like the teams' GPU costs there (0.05 and 0.1)
            ("team-a", 0.25, 0.125, 0.05, 0.05, 0.05 / 3, 0.05 + 0.05 / 3),
            ("team-b", 0.5, 0.25, 0.1, 0.1, 0.05 * 2 / 3, 0.1 + 0.05 * 2 / 3),
        ],
    )
    # per resource and cell: the only team takes the idle GPUs, cores and GiB of the A100 node in
    # hour 0 (6 × 2.0 + 24 × 0.04 + 192 × 0.005); the CPU-only node and hour 1 nobody used stay idle
    team_a_idle = 6 * 2.0 + 24 * 0.04 + 192 * 0.005
    idle_total = 28.0 + 88 * 0.04 + 576 * 0.005
    approx_rows(
        rows(
            con,
            """select tenant, cost_idle_separate, idle_share, cost_idle_shared
               from fct_showback where run_id = 'cpu-memory' order by tenant""",
        ),
        [
            ("__idle__", idle_total, 0.0, idle_total - team_a_idle),
            ("team-a", 4.64, team_a_idle, 4.64 + team_a_idle),
        ],
    )
    assert rows(
        con, "select distinct billing_period_start, billing_period_end from fct_showback"
    ) == [(NOVEMBER, datetime(2026, 12, 1))]


def test_fct_commitment_utilization(con):
    approx_rows(
        rows(con, "select * from fct_commitment_utilization"),
        [
            # two Committed H100 nodes, one pool: c2 idle while w_s ran on the on-demand node
            # coverage on usage: 8 covered of 8 + 4 on-demand eligible GPU-h used
            ("pool", "k8s://pool/commitment/gpu-h100", NOVEMBER, "gpu-h100", 2, "H100", "gpu", "GPU-Hours",
             16.0, 8.0, 8.0, 48.0, 24.0, 24.0, 0.5, 4.0, 8.0, 0.0, 12.0, 8 / 12, 4.0, 4 * 4.0),
            # w_s on the idle commitment instead: all 12 GPU-h used are covered
            ("pool-moved", "k8s://pool-moved/commitment/gpu-h100", NOVEMBER, "gpu-h100", 2, "H100", "gpu",
             "GPU-Hours", 16.0, 12.0, 4.0, 48.0, 36.0, 12.0, 0.75, 0.0, 8.0, 0.0, 12.0, 1.0, 0.0, 0.0),
            # spot usage (8 GPU-h) and the 2 Unused GPU-h are not eligible usage: 6 ÷ (6 + 2)
            ("pool-spot", "k8s://pool-spot/commitment/gpu-h100", NOVEMBER, "gpu-h100", 1, "H100", "gpu",
             "GPU-Hours", 8.0, 6.0, 2.0, 24.0, 18.0, 6.0, 0.75, 2.0, 8.0, 8.0, 8.0, 0.75, 2.0, 2 * 4.0),
            # no on-demand H100 capacity: all eligible capacity is committed
            ("reserved", "k8s://reserved/commitment/gpu-h100", NOVEMBER, "gpu-h100", 1, "H100", "gpu",
             "GPU-Hours", 16.0, 4.0 + 2 * 600 / 3600, 16.0 - 4.0 - 2 * 600 / 3600, 48.0,
             3.0 * (4.0 + 2 * 600 / 3600), 3.0 * (16.0 - 4.0 - 2 * 600 / 3600), (4.0 + 2 * 600 / 3600) / 16.0,
             0.0, 0.0, 0.0, 4.0 + 2 * 600 / 3600, 1.0, 0.0, 0.0),
        ],
    )


def test_fct_unit_economics(con):
    used = 4.0 + 2 * 600 / 3600
    approx_rows(
        rows(
            con,
            """select metric, scope, value, unit from fct_unit_economics
               where run_id = 'reserved' order by metric, scope""",
        ),
        [
            ("allocated_gpu_hours", "all", used, "GPU-Hours"),
            ("borrowed_gpu_hours", "all", 0.0, "GPU-Hours"),
            ("capacity_gpu_hours", "all", 16.0, "GPU-Hours"),
            ("capacity_gpu_hours", "phase:drain", 8.0, "GPU-Hours"),
            ("capacity_gpu_hours", "phase:steady", 8.0, "GPU-Hours"),
            # no on-demand H100 usage: all eligible usage is covered
            ("commitment_coverage", "all", 1.0, "ratio"),
            ("commitment_savings_rate", "all", (64.0 - 48.0) / 64.0, "ratio"),
            ("commitment_utilization", "all", used / 16, "ratio"),
            ("cost_per_gpu_hour", "all", 3.0, "USD/GPU-Hour"),
            # the run's only user carries the node's idle of both hours
            ("cost_per_training_run", "all", 48.0, "USD"),
            ("cost_per_training_run", "outcome:finished", 48.0, "USD"),
            # the whole 48 USD of the node over the 4 GPU-hours that moved the work forward
            ("cost_per_useful_gpu_hour", "all", 48.0 / 4.0, "USD/GPU-Hour"),
            ("cost_per_workload", "all", 3.0 * used, "USD"),
            ("cost_per_workload", "kind:training", 3.0 * used, "USD"),
            ("coverable_on_demand_cost", "all", 0.0, "USD"),
            ("coverable_on_demand_gpu_hours", "all", 0.0, "GPU-Hours"),
            # (ListCost − EffectiveCost) ÷ ListCost over the capacity paid
            ("effective_savings_rate", "all", (64.0 - 48.0) / 64.0, "ratio"),
            ("gang_wait_cost", "all", 3.0 * 2 * 600 / 3600, "USD"),
            ("gang_wait_gpu_hours", "all", 2 * 600 / 3600, "GPU-Hours"),
            ("gpu_allocation_rate", "all", used / 16, "ratio"),
            ("gpu_allocation_rate", "phase:drain", 2 * 2 * 600 / 3600 / 8, "ratio"),
            ("gpu_allocation_rate", "phase:steady", (used - 2 * 2 * 600 / 3600) / 8, "ratio"),
            ("idle_cost", "cause:gang_barrier", 3.0 * 2 * 600 / 3600, "USD"),
            ("idle_cost", "cause:no_demand", 3.0 * (16 - used - 2 * 600 / 3600), "USD"),
            # idle on a Committed node is paid whatever happens
            ("idle_cost", "idle:sunk", 3.0 * (16 - used), "USD"),
            ("idle_gpu_hours", "cause:gang_barrier", 2 * 600 / 3600, "GPU-Hours"),
            ("idle_gpu_hours", "cause:no_demand", 16 - used - 2 * 600 / 3600, "GPU-Hours"),
            ("idle_gpu_hours", "idle:sunk", 16 - used, "GPU-Hours"),
            ("preemption_waste_cost", "all", 0.0, "USD"),
            ("preemption_waste_gpu_hours", "all", 0.0, "GPU-Hours"),
            ("productive_gpu_hours", "all", 4.0, "GPU-Hours"),
            ("spot_share", "all", 0.0, "ratio"),
            ("total_contracted_cost", "all", 64.0, "USD"),
            ("total_effective_cost", "all", 48.0, "USD"),
            ("total_list_cost", "all", 64.0, "USD"),
            ("training_runs", "outcome:finished", 1.0, "count"),
            ("unused_commitment_cost", "all", 3.0 * (16 - used), "USD"),
        ],
    )
    waste = rows(
        con,
        """select run_id, metric, value from fct_unit_economics
           where metric in ('preemption_waste_cost', 'spot_share', 'borrowed_gpu_hours')
             and run_id in ('preempted', 'fractional', 'kueue') order by all""",
    )
    assert waste == [
        ("fractional", "borrowed_gpu_hours", 0.0),
        ("fractional", "preemption_waste_cost", 0.0),
        ("fractional", "spot_share", 1.0),
        # Kueue's measure: GPU-hours above the queue's nominal quota
        ("kueue", "borrowed_gpu_hours", pytest.approx(4 * 3000 / 3600)),
        ("kueue", "preemption_waste_cost", 0.0),
        ("kueue", "spot_share", 0.0),
        ("preempted", "borrowed_gpu_hours", 0.0),
        ("preempted", "preemption_waste_cost", pytest.approx(2 * 200 / 3600 * 2.0)),
        ("preempted", "spot_share", 0.0),
    ]


def test_gpu_efficiency_splits_productive_hours_by_measured_utilisation(con):
    """8 A100s for 1 h at 25 % engine-active: 2 active and 6 allocated-idle GPU-hours, at the
    A100 price of 2.0; the twin without a measurement is unmeasured, not 100 % efficient."""
    approx_rows(
        rows(con, """select x_Workload, x_UsageSubClass, x_GpuActiveFraction, PricingQuantity, EffectiveCost
                     from focus_cost_records
                     where x_RunId = 'gpu-efficiency' and x_Resource = 'gpu' and x_UsageClass = 'productive'
                     order by all"""),
        [("w1", "active", 0.25, 2.0, 4.0), ("w1", "allocated_idle", 0.25, 6.0, 12.0),
         ("w2", "unmeasured", None, 8.0, 16.0)],
    )
    approx_rows(
        rows(con, """select tenant, kind, gpu_model, workloads, measured_workloads, allocated_gpu_hours,
                            active_gpu_hours, allocated_idle_gpu_hours, unmeasured_gpu_hours, efficiency,
                            allocated_cost, active_cost, allocated_idle_cost, unmeasured_cost
                     from fct_gpu_efficiency where run_id = 'gpu-efficiency' order by all"""),
        [("team-a", "training", "A100", 1, 1, 8.0, 2.0, 6.0, 0.0, 0.25, 16.0, 4.0, 12.0, 0.0),
         ("team-b", "notebook", "A100", 1, 0, 8.0, 0.0, 0.0, 8.0, None, 16.0, 0.0, 0.0, 16.0)],
    )
    # productive stays productive: the split moves no GPU-hour or cent between classes
    approx_rows(
        rows(con, """select workload_id, gpu_hours_productive, productive_cost from fct_workloads
                     where run_id = 'gpu-efficiency' order by all"""),
        [("w1", 8.0, 16.0), ("w2", 8.0, 16.0)],
    )


def test_gpu_efficiency_audits_catch_a_broken_split(built, tmp_path):
    """The audits return the violating rows: a tampered active part breaks both."""
    import shutil

    import duckdb

    from pipeline.runner import AUDITS_DIR

    copy = tmp_path / "copy.duckdb"
    shutil.copy(built.db, copy)
    with duckdb.connect(str(copy)) as db:
        for audit in ("gpu_active_split_conserved", "gpu_efficiency_conserved"):
            assert db.execute((AUDITS_DIR / f"{audit}.sql").read_text()).fetchall() == []
        db.execute("update focus_cost_records set PricingQuantity = PricingQuantity + 1 "
                   "where x_RunId = 'gpu-efficiency' and x_UsageSubClass = 'active'")
        db.execute("update fct_gpu_efficiency set active_gpu_hours = active_gpu_hours + 1 "
                   "where run_id = 'gpu-efficiency' and tenant = 'team-a'")
        assert [r[2] for r in db.execute((AUDITS_DIR / "gpu_active_split_conserved.sql").read_text()).fetchall()] == ["w1"]
        assert [r[1] for r in db.execute((AUDITS_DIR / "gpu_efficiency_conserved.sql").read_text()).fetchall()] == ["team-a"]


def test_rightsizing_hint_for_the_low_utilisation_workload_only(con):
    """8 GPUs at 25 %: 2 GPUs of work, sized for 80 % -> 3 GPUs; the same hour then costs 3/8 of
    16.00. The unmeasured twin gets no hint: unknown is not idle."""
    approx_rows(
        rows(con, """select workload_id, gpus_per_pod, gpu_utilization, suggested_gpus_per_pod, suggested_utilization,
                            allocated_gpu_hours, allocated_cost, allocated_idle_cost, suggested_gpu_hours,
                            suggested_cost, saving
                     from fct_rightsizing_hints where run_id = 'gpu-efficiency'"""),
        [("w1", 8.0, 0.25, 3.0, 2 / 3, 8.0, 16.0, 12.0, 3.0, 6.0, 10.0)],
    )
