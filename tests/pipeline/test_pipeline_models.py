"""Each intermediate model against hand-computed tables for the scenarios (tests/pipeline/scenarios.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tables import approx_rows, as_dict, rows

from pipeline.runner import MODELS

# the scenarios these tables were computed for (the attribution scenarios have their own tests)
BASE_RUNS = ("('cpu-memory', 'finished-gang', 'fractional', 'kueue', 'mixed-causes', 'past-horizon', "
             "'pod-by-pod', 'preempted', 'reserved')")


def test_models_are_listed_after_everything_they_read():
    position = {model.name: index for index, model in enumerate(MODELS)}
    for model in MODELS:
        for dependency in model.dependencies():
            if not dependency.startswith("raw_"):
                assert position[dependency] < position[model.name], (model.name, dependency)


def test_every_intermediate_and_mart_model_has_a_table_test():
    here = Path(__file__).parent
    tested = "".join(
        (here / name).read_text()
        for name in ("test_pipeline_models.py", "test_pipeline_marts.py", "test_pipeline_focus.py",
                     "test_pipeline_attribution.py", "test_pipeline_label_allocation.py", "test_pipeline_idle_causes.py",
                     "test_pipeline_cascades.py")
    )
    for model in MODELS:
        if model.layer != "staging":
            assert f"from {model.name}" in tested, f"no table test reads {model.name}"


def test_int_pod_intervals_classify_every_held_second(con):
    actual = rows(
        con,
        f"""select run_id, workload_id, pod_index, start_s, end_s, usage_class, gpus, borrowed
           from int_pod_intervals where run_id in {BASE_RUNS}
           order by run_id, workload_id, pod_index, start_s""",
    )
    assert actual == [
        ("cpu-memory", "w1", 0, 0.0, 3600.0, "productive", 2.0, False),
        ("finished-gang", "w1", 0, 0.0, 1800.0, "productive", 4.0, False),
        ("finished-gang", "w1", 1, 0.0, 1800.0, "productive", 4.0, False),
        ("fractional", "w1", 0, 0.0, 3600.0, "productive", 0.25, False),
        ("fractional", "w2", 0, 0.0, 3600.0, "productive", 0.5, False),
        ("kueue", "w1", 0, 0.0, 3600.0, "productive", 4.0, False),
        # admitted with reason Borrowing
        ("kueue", "w2", 0, 600.0, 4200.0, "productive", 4.0, True),
        # reserved at the barrier until the gang's time-out
        ("mixed-causes", "g", 0, 0.0, 1800.0, "gang_wait", 2.0, False),
        # cut at the horizon
        ("past-horizon", "w1", 0, 3600.0, 7200.0, "productive", 8.0, False),
        # the gang never reached min_count: all partial-placement waste
        ("pod-by-pod", "w1", 0, 100.0, 1300.0, "gang_wait", 4.0, False),
        ("pod-by-pod", "w1", 1, 200.0, 1300.0, "gang_wait", 4.0, False),
        # checkpoint every 600 s: the last before the eviction at 2000 is 1800
        ("preempted", "w1", 0, 0.0, 1800.0, "productive", 2.0, False),
        ("preempted", "w1", 0, 1800.0, 2000.0, "lost_to_preemption", 2.0, False),
        ("preempted", "w2", 0, 2000.0, 5000.0, "productive", 6.0, False),
        # reserved at 0, gang complete at 600
        ("reserved", "w1", 0, 0.0, 600.0, "gang_wait", 2.0, False),
        ("reserved", "w1", 0, 600.0, 4200.0, "productive", 2.0, False),
        ("reserved", "w1", 1, 600.0, 4200.0, "productive", 2.0, False),
    ]


def test_int_pod_holdings_cut_open_pods_at_horizon(con):
    assert rows(
        con,
        "select hold_start_s, end_s, end_event, open_at_horizon from int_pod_holdings "
        "where run_id = 'past-horizon'",
    ) == [(3600.0, 7200.0, None, True)]


def test_int_admissions_hold_quota_until_the_last_finish(con):
    assert rows(
        con,
        f"""select run_id, workload_id, attempt, cluster_queue, flavor, borrowed, gpus, start_s, end_s
           from int_admissions where run_id in {BASE_RUNS} order by all""",
    ) == [
        # admitted without a flavor (a hand-made log): kept, flavor null
        ("finished-gang", "w1", 0, "cq-a", None, False, 8.0, 0.0, 1800.0),
        ("kueue", "w1", 0, "cq-a", "a100", False, 4.0, 0.0, 3600.0),
        ("kueue", "w2", 0, "cq-a", "a100", True, 4.0, 600.0, 4200.0),
    ]


def test_int_gang_progress(con):
    assert rows(
        con,
        f"""select run_id, workload_id, attempt, min_count, first_start_s, progress_start_s
           from int_gang_progress where run_id in {BASE_RUNS} order by all""",
    ) == [
        ("cpu-memory", "w1", 0, 1, 0.0, 0.0),
        ("finished-gang", "w1", 0, 2, 0.0, 0.0),
        ("fractional", "w1", 0, 1, 0.0, 0.0),
        ("fractional", "w2", 0, 1, 0.0, 0.0),
        ("kueue", "w1", 0, 1, 0.0, 0.0),
        ("kueue", "w2", 0, 1, 600.0, 600.0),
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
    # the pod's CPU and memory requests, per hour held
    assert rows(
        con,
        """select cpu_cores, memory_gib, cpu_core_hours, memory_gib_hours
           from int_hourly_usage where run_id = 'cpu-memory'""",
    ) == [(8.0, 64.0, 8.0, 64.0)]


def test_int_node_capacity_periods(con):
    approx_rows(
        rows(
            con,
            """select period_index, capacity_gpu_hours, held_gpu_hours, idle_gpu_hours
               from int_node_capacity_periods where run_id = 'fractional' order by all""",
        ),
        [(0, 1.0, 0.75, 0.25), (1, 1.0, 0.0, 1.0)],
    )
    assert rows(
        con,
        """select node, period_index, capacity_gpu_hours, idle_gpu_hours,
                  capacity_cpu_core_hours, held_cpu_core_hours, idle_cpu_core_hours,
                  capacity_memory_gib_hours, held_memory_gib_hours, idle_memory_gib_hours
           from int_node_capacity_periods where run_id = 'cpu-memory' order by all""",
    ) == [
        # the CPU-only node has no GPUs
        ("c1", 0, 0.0, 0.0, 16.0, 0.0, 16.0, 64.0, 0.0, 64.0),
        ("c1", 1, 0.0, 0.0, 16.0, 0.0, 16.0, 64.0, 0.0, 64.0),
        ("g1", 0, 8.0, 6.0, 32.0, 8.0, 24.0, 256.0, 64.0, 192.0),
        ("g1", 1, 8.0, 8.0, 32.0, 0.0, 32.0, 256.0, 0.0, 256.0),
    ]


def test_int_workload_gpu_models(con):
    assert rows(
        con,
        """select run_id, workload_id, gpu_model from int_workload_gpu_models
           where run_id in ('cpu-memory', 'fractional') order by all""",
    ) == [
        # no model asked: every GPU model of the cluster (the CPU-only node has none)
        ("cpu-memory", "w1", "A100"),
        ("fractional", "w1", "T4"),
        ("fractional", "w2", "T4"),
    ]


def test_int_pending_demand_blocked_by_quota_placement_or_latency(con):
    assert rows(
        con,
        """select run_id, workload_id, tenant, gpu_models, blocked_by, start_s, end_s, demand_gpus
           from int_pending_demand
           where run_id in ('preempted', 'pod-by-pod', 'kueue', 'mixed-causes', 'past-horizon',
                            'multi-model', 'reclaim')
           order by all""",
    ) == [
        # WaitingForQuota until admitted (Borrowing) and started at 600
        ("kueue", "w2", "team-a", "A100", "quota", 0.0, 600.0, 4.0),
        ("kueue", "w3", "team-b", "A100", "quota", 1200.0, 7200.0, 2.0),
        # requeued after the gang's time-out: GangNotSatisfiable is a placement reason
        ("mixed-causes", "g", "team-a", "A100", "placement", 1800.0, 3600.0, 4.0),
        ("mixed-causes", "wp", "team-c", "A100", "placement", 0.0, 3600.0, 8.0),
        ("mixed-causes", "wq", "team-b", "A100", "quota", 0.0, 3600.0, 4.0),
        # one set of the models it accepts: its GPUs count once across them
        ("multi-model", "w_x", "team-b", "A100|H100", "placement", 0.0, 3600.0, 8.0),
        # submitted, never tried before its start: latency
        ("past-horizon", "w1", "team-a", "A100", "latency", 3000.0, 3600.0, 8.0),
        # no pending row yet, and back in the queue after the time-out: not tried, latency
        ("pod-by-pod", "w1", "team-a", "A100", "latency", 0.0, 100.0, 12.0),
        ("pod-by-pod", "w1", "team-a", "A100", "latency", 1300.0, 7200.0, 12.0),
        # w1 submitted and started at 0: a zero-length wait is no wait
        ("preempted", "w1", "team-a", "A100", "placement", 2000.0, 7200.0, 2.0),
        ("preempted", "w2", "team-b", "A100", "placement", 1990.0, 2000.0, 6.0),
        # waiting for the preempted pod to drain: latency; the victim then waits for quota
        ("reclaim", "w_r", "team-a", "A100", "latency", 1990.0, 2000.0, 4.0),
        ("reclaim", "w_v", "team-b", "A100", "quota", 2000.0, 3600.0, 4.0),
    ]
    # workloads that can never run are not demand at all
    assert rows(
        con, "select count(*) from int_pending_demand where run_id = 'unservable' and workload_id <> 'w_q'"
    ) == [(0,)]


def test_int_gang_barrier_demand_counts_the_missing_pods(con):
    assert rows(
        con,
        """select run_id, workload_id, attempt, gpu_model, blocked_by, start_s, end_s, missing_gpus
           from int_gang_barrier_demand order by all""",
    ) == [
        # a reservation at the barrier, on the model its pods hold (not the free H100s too)
        ("barrier-model", "g", 0, "A100", "gang_barrier", 0.0, 1800.0, 4.0),
        ("cause-owners", "g", 0, "A100", "gang_barrier", 0.0, 3600.0, 2.0),
        ("mixed-causes", "g", 0, "A100", "gang_barrier", 0.0, 1800.0, 2.0),
        # kube-default: pods started one by one hold no barrier; their missing pods are placement
        # demand: one pod of three running misses two, then two miss one
        ("pod-by-pod", "w1", 0, "A100", "placement", 100.0, 200.0, 8.0),
        ("pod-by-pod", "w1", 0, "A100", "placement", 200.0, 1300.0, 4.0),
        # until the gang completes at 600
        ("reserved", "w1", 0, "H100", "gang_barrier", 0.0, 600.0, 2.0),
    ]


def test_int_shared_device_slack(con):
    # 0.25 + 0.5 share one T4 for the first hour: 0.25 of it nobody can use but a fraction
    assert rows(
        con,
        f"""select run_id, node, gpu_model, period_index, start_s, end_s, fractional_gpus, slack_gpus
           from int_shared_device_slack where run_id in {BASE_RUNS} order by all""",
    ) == [("fractional", "n1", "T4", 0, 0.0, 3600.0, 0.75, 0.25)]


def test_int_idle_by_cause(con):
    actual = as_dict(con, "select run_id, node, period_index, idle_reason, gpu_hours from int_idle_by_cause")
    expected = {
        # nobody waits: all idle is no_demand
        ("finished-gang", "n1", 0, "no_demand"): 4.0,
        ("finished-gang", "n1", 1, "no_demand"): 8.0,
        # w2 waits 10 s for 6 free GPUs, then w1 waits for 2 with 2 free until w2 ends: each fits
        # the free GPUs as they are, so trying again would have placed it (scheduling_latency;
        # before the fit test: fragmentation)
        ("preempted", "n1", 0, "scheduling_latency"): (6 * 10 + 2 * 1600) / 3600,
        ("preempted", "n1", 0, "no_demand"): 8 - 2 * 2000 / 3600 - 6 * 1600 / 3600 - (6 * 10 + 2 * 1600) / 3600,
        ("preempted", "n1", 1, "scheduling_latency"): (2 * 1400 + 2 * 2200) / 3600,
        # the 3-pod gang (3 × 4) never fits the 8-GPU node whole: 8 free before its first
        # attempt and after its time-out, 4 free while one pod runs and misses two, all capacity
        # shortfall (before: scheduling_latency and fragmentation)
        ("pod-by-pod", "n1", 0, "gang_barrier"): 0.0,
        ("pod-by-pod", "n1", 0, "capacity_shortfall"): (8 * 100 + 4 * 100 + 8 * 2300) / 3600,
        ("pod-by-pod", "n1", 0, "no_demand"): 0.0,
        ("pod-by-pod", "n1", 1, "capacity_shortfall"): 8.0,
        ("pod-by-pod", "n1", 1, "no_demand"): 0.0,
        ("past-horizon", "n1", 0, "scheduling_latency"): 8 * 600 / 3600,
        # the unshared quarter of the shared T4 is its own cause
        ("fractional", "n1", 0, "shared_device_slack"): 0.25,
        ("fractional", "n1", 0, "fragmentation"): 0.0,
        ("fractional", "n1", 0, "no_demand"): 0.0,
        ("fractional", "n1", 1, "no_demand"): 1.0,
        # the same holding on a node whose GPU is split into DRA partitions: partition_fragmentation
        ("mig", "n1", 0, "partition_fragmentation"): 1 - 0.142,
        ("mig", "n1", 0, "shared_device_slack"): 0.0,
        ("mig", "n1", 1, "no_demand"): 1.0,
        ("reserved", "n1", 0, "gang_barrier"): 2 * 600 / 3600,
        ("reserved", "n1", 0, "no_demand"): 4.0,
        # Kueue holds w2 back 0..600 (4 free), w3 from 1200 (2 of the free GPUs)
        ("kueue", "n1", 0, "quota"): 4 * 600 / 3600,
        ("kueue", "n1", 0, "no_demand"): 0.0,
        ("kueue", "n1", 1, "quota"): 2.0,
        ("kueue", "n1", 1, "no_demand"): 8 - 4 * 600 / 3600 - 2.0,
        # claimed in order: the gang's missing pod (2 of 6 free), then what could use the rest:
        # wp (1 × 8) does not fit the 6 free GPUs even packed; wq (1 × 4) fits them as they are,
        # quota 4 × 0.5 h. After the gang's time-out 8 are free and both g (2 × 2) and wp fit
        # them: trying again would have placed them, scheduling_latency 8 × 0.5 h (before the
        # fit test: fragmentation 4 × 0.5 h + 8 × 0.5 h, quota none)
        ("mixed-causes", "n1", 0, "gang_barrier"): 2 * 1800 / 3600,
        ("mixed-causes", "n1", 0, "quota"): 4 * 1800 / 3600,
        ("mixed-causes", "n1", 0, "scheduling_latency"): 8 * 1800 / 3600,
        ("mixed-causes", "n1", 0, "fragmentation"): 0.0,
        ("mixed-causes", "n1", 0, "no_demand"): 0.0,
        ("cpu-memory", "g1", 0, "no_demand"): 6.0,
        ("cpu-memory", "c1", 0, "no_demand"): 0.0,
    }
    for key, hours in expected.items():
        # a cause that explains nothing of a node-period has no row
        assert actual.get(key, 0.0) == pytest.approx(hours, abs=1e-12), key
    assert min(actual.values()) > 0
    # eight causes, held + causes = capacity
    assert rows(
        con, "select distinct idle_reason from int_idle_by_cause order by all"
    ) == [("capacity_shortfall",), ("fragmentation",), ("gang_barrier",), ("no_demand",),
          ("partition_fragmentation",), ("quota",), ("scheduling_latency",), ("shared_device_slack",)]


def test_int_node_prices_resolve_the_price_book(con):
    assert rows(
        con,
        """select run_id, node, resource, units, unit, list_unit_price, contracted_unit_price,
                  effective_unit_price, sku_id, sku_price_id
           from int_node_prices where run_id in ('cpu-memory', 'reserved', 'fractional')
           order by all""",
    ) == [
        ("cpu-memory", "c1", "cpu", 16.0, "Core-Hours", 0.04, 0.04, 0.04, "cpu-core", "cpu-core-standard"),
        ("cpu-memory", "c1", "memory", 64.0, "GiB-Hours", 0.005, 0.005, 0.005, "memory-gib",
         "memory-gib-standard"),
        ("cpu-memory", "g1", "cpu", 32.0, "Core-Hours", 0.04, 0.04, 0.04, "cpu-core", "cpu-core-standard"),
        ("cpu-memory", "g1", "gpu", 8.0, "GPU-Hours", 2.0, 2.0, 2.0, "gpu-a100", "gpu-a100-standard"),
        ("cpu-memory", "g1", "memory", 256.0, "GiB-Hours", 0.005, 0.005, 0.005, "memory-gib",
         "memory-gib-standard"),
        # spot node: pays the spot price (a dynamic price, not a commitment discount)
        ("fractional", "n1", "gpu", 1.0, "GPU-Hours", 0.5, 0.2, 0.2, "gpu-t4", "gpu-t4-dynamic"),
        # committed node: contracted = list (FOCUS excludes commitment discounts), pays the
        # commitment rate (effective)
        ("reserved", "n1", "gpu", 8.0, "GPU-Hours", 4.0, 4.0, 3.0, "gpu-h100", "gpu-h100-committed"),
    ]


def test_int_cost_lines_cover_requests_and_idle_per_resource(con):
    assert rows(
        con,
        """select node, resource, period_index, workload_id, usage_class, idle_reason, quantity
           from int_cost_lines where run_id = 'cpu-memory' order by all""",
    ) == [
        ("c1", "cpu", 0, None, "idle", "unallocated", 16.0),
        ("c1", "cpu", 1, None, "idle", "unallocated", 16.0),
        ("c1", "memory", 0, None, "idle", "unallocated", 64.0),
        ("c1", "memory", 1, None, "idle", "unallocated", 64.0),
        # nulls sort last
        ("g1", "cpu", 0, "w1", "productive", None, 8.0),
        ("g1", "cpu", 0, None, "idle", "unallocated", 24.0),
        ("g1", "cpu", 1, None, "idle", "unallocated", 32.0),
        ("g1", "gpu", 0, "w1", "productive", None, 2.0),
        ("g1", "gpu", 0, None, "idle", "no_demand", 6.0),
        ("g1", "gpu", 1, None, "idle", "no_demand", 8.0),
        ("g1", "memory", 0, "w1", "productive", None, 64.0),
        ("g1", "memory", 0, None, "idle", "unallocated", 192.0),
        ("g1", "memory", 1, None, "idle", "unallocated", 256.0),
    ]



def test_int_cost_lines_idle_lines_are_one_per_reason_and_node_resource(con):
    """int_idle_shares rounds each idle line as a sum of one row (xone) instead of grouping
    them by this key: that is exact only while no two idle lines share it."""
    assert rows(
        con,
        """select run_id, period_index, node, resource, idle_reason, count(*) from int_cost_lines
           where workload_id is null group by all having count(*) > 1""",
    ) == []
    assert rows(con, "select count(*) from int_cost_lines where workload_id is null")[0][0] > 0

def test_int_commitments_one_pool_per_sku_and_month(con):
    assert rows(
        con,
        """select * exclude (charge_period_start, charge_period_end, billing_period_start)
           from int_commitments where run_id = 'reserved'""",
    ) == [
        ("reserved", "gpu-h100", "gpu", "k8s://reserved/commitment/gpu-h100", "H100", "GPU-Hours", 4.0,
         3.0, 1, 16.0),
    ]
    # two Committed H100 nodes, one pool
    assert rows(
        con, "select commitment_id, nodes, committed_quantity from int_commitments where run_id = 'pool'"
    ) == [("k8s://pool/commitment/gpu-h100", 2, 16.0)]
    assert [tuple(str(v) for v in r) for r in rows(
        con, "select billing_period_start, charge_period_start, charge_period_end from int_commitments "
        "where run_id = 'reserved'"
    )] == [("2026-11-01 00:00:00", "2026-11-02 00:00:00", "2026-11-02 02:00:00")]


def test_int_device_profiles_names_the_devices_a_dra_workload_took(con):
    """One row per workload × node it took DRA devices on; none for runs without --dra."""
    assert con.execute("select run_id, workload_id, node, device_profile, gpu_share, device_allocations "
                       "from int_device_profiles order by all").fetchall() == [("mig", "w1", "n1", "1g.10gb", 0.142, 1)]


def test_cost_per_device_profile_adds_up_to_the_dra_workloads_cost(con):
    found = con.execute("""select device_profile, usage, gpu_share, workloads, gpu_hours, list_cost
                           from fct_device_profile_cost where run_id = 'mig' order by usage desc""").fetchall()
    price = con.execute("""select max(ListUnitPrice) from focus_cost_records
                           where x_RunId = 'mig' and x_Resource = 'gpu'""").fetchone()[0]
    assert found == [("1g.10gb", "workload", 0.142, 1, pytest.approx(0.142), pytest.approx(0.142 * price)),
                    (None, "partition_fragmentation", None, 0, pytest.approx(0.858), pytest.approx(0.858 * price))]
    assert con.execute("select count(*) from fct_device_profile_cost where run_id <> 'mig'").fetchone() == (0,)


def test_the_device_profile_audit_catches_a_cent_gone_missing(built, tmp_path):
    import shutil

    import duckdb

    audit = (Path(__file__).resolve().parents[2] / "pipeline" / "audits" / "device_profile_cost_conserved.sql").read_text()
    copy = tmp_path / "copy.duckdb"
    shutil.copy(built.db, copy)
    with duckdb.connect(str(copy)) as db:
        assert db.execute(audit).fetchall() == []
        db.execute("update fct_device_profile_cost set effective_cost = effective_cost - 0.01 where usage = 'workload'")
        assert [r[0] for r in db.execute(audit).fetchall()] == ["mig"]
