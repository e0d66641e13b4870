"""Cost attribution II, one rule a test, on the hand-made logs of tests/pipeline/scenarios.py
(the `unservable`, `multi-model`, `barrier-model`, `reclaim`, `window`, `cause-owners`, `phases`
and `pool` runs, with some of the original ones). Expected GPU-hours and dollars are worked out
in each scenario's comment; docs/cost-model.md states the rules.

Prices (tests/pipeline/runs.py): A100 list 2.0 / contracted 1.5, H100 4.0 / 3.0 per GPU-hour.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from tables import approx_rows, as_dict, idle_by_cause, rows

H = 3600.0



def charged(con, run_id: str, policy: str, column: str = "charged_cost") -> dict[str, float]:
    return {
        tenant: value
        for (tenant,), value in as_dict(
            con,
            f"""select tenant, sum({column}) from fct_chargeback
                where run_id = ? and idle_policy = ? group by all""",
            [run_id, policy],
        ).items()
    }


def assert_close(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys(), actual
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, abs=1e-9), key


# --- idle causes ---------------------------------------------------------------------------------


def test_never_admissible_demand_makes_no_quota_idle(con):
    # w_big (8 GPUs in a queue that can hold 4) waits all hour beside free GPUs: no idle is hers
    assert_close(idle_by_cause(con, "unservable"), {("A100", "quota"): 1.0, ("A100", "no_demand"): 8.0})
    # each unservable workload, with the fact that says so
    assert rows(
        con,
        """select workload_id, tenant, cluster_queue, reason, evidence, demand_gpus
           from int_unservable_workloads where run_id = 'unservable' order by all""",
    ) == [
        ("w_big", "team-a", "cq-a", "ExceedsMaxQuota", "kueue", 8.0),
        # no attempt yet, but 6 GPUs is more than cq-a can ever hold (4, no borrowing)
        ("w_never", "team-a", "cq-a", "ExceedsMaxQuota", "quota_table", 6.0),
        # a model the cluster does not have
        ("w_t4", "team-b", "cq-b", "UnknownGpuModel", "cluster", 1.0),
        ("w_wide", "team-b", None, "LargerThanCluster", "rejected", 24.0),
    ]
    # reported on its own: GPU-hours asked (GPUs × duration) and waited in the window
    approx_rows(
        rows(
            con,
            """select workload_id, reason, submit_phase, asked_gpu_hours, waited_gpu_hours
               from fct_unservable_demand where run_id = 'unservable' order by all""",
        ),
        [
            ("w_big", "ExceedsMaxQuota", "steady", 8.0, 8.0),
            ("w_never", "ExceedsMaxQuota", "steady", 6.0, 6.0),
            ("w_t4", "UnknownGpuModel", "steady", 1.0, 1.0),
            # rejected at once: it asked 3 × 8 GPUs for 2 h and waited for nothing
            ("w_wide", "LargerThanCluster", "steady", 48.0, 0.0),
        ],
    )
    assert rows(
        con,
        """select workload_id, outcome, unservable_reason, pending_demand_gpu_hours from fct_workloads
           where run_id = 'unservable' and outcome = 'unservable' order by all""",
    ) == [("w_big", "unservable", "ExceedsMaxQuota", 0.0), ("w_never", "unservable", "ExceedsMaxQuota", 0.0),
          ("w_t4", "unservable", "UnknownGpuModel", 0.0), ("w_wide", "unservable", "LargerThanCluster", 0.0)]


def test_a_workload_waiting_for_quota_beside_free_gpus_makes_quota_idle(con):
    # w_q (2 GPUs) waits for quota 0..1800 while 8 A100 GPUs are free: 2 × 0.5 h
    assert idle_by_cause(con, "unservable")[("A100", "quota")] == pytest.approx(1.0)
    # kueue: 4 free GPUs for w2 over 600 s, then 2 of the free GPUs for w3
    assert idle_by_cause(con, "kueue")[("A100", "quota")] == pytest.approx(4 * 600 / H + 2.0)
    # quota waits with no free GPU beside them make none: reclaim's w_v waits with 4 free
    assert idle_by_cause(con, "reclaim")[("A100", "quota")] == pytest.approx(4 * 1600 / H)


def test_demand_counts_once_across_the_models_it_accepts(con):
    # w_x (1 × 8 GPUs, A100 or H100) beside 8 free A100 (4 a node) and 4 free H100 GPUs: packed,
    # it fits the A100s only, so their 8 are fragmentation; its 8 GPUs are then matched, and the
    # H100s it could never use are no_demand, not a second claim (before the fit test: split 8:4
    # as fragmentation on both models)
    assert_close(
        idle_by_cause(con, "multi-model"),
        {("A100", "fragmentation"): 8.0, ("H100", "no_demand"): 4.0},
    )


def test_gang_barrier_only_at_a_reservation_and_on_the_gangs_model(con):
    # the reserved pod waits on A100 (2 free): 2 × 0.5 h; the free H100s are not the barrier's.
    # After the time-out the gang (2 × 4) waits for placement beside 6 A100 GPUs on one node
    # (one pod fits) and 8 H100 (both fit as they are): trying again would place it on the H100s,
    # scheduling latency 8 × 0.5 h; the A100s could not have run it (before the fit test:
    # fragmentation 8 × 0.5 h, split 6:8)
    assert_close(
        idle_by_cause(con, "barrier-model"),
        {
            ("A100", "gang_barrier"): 1.0,
            ("A100", "no_demand"): 3.0,
            ("H100", "scheduling_latency"): 4.0,
            ("H100", "no_demand"): 4.0,
        },
    )
    # kube-default starts pods one by one: no barrier holds anything. The gang (3 × 4) can never
    # fit the 8-GPU node whole: its waits before any attempt (8 free × 100 s, then 8 × 2300 s
    # and the second hour after the time-out) and its missing pods (4 free × 100 s) are capacity
    # shortfall (before: scheduling latency and fragmentation)
    assert_close(
        idle_by_cause(con, "pod-by-pod"),
        {("A100", "capacity_shortfall"): (8 * 100 + 4 * 100 + 8 * 2300) / H + 8.0},
    )


def test_untried_and_draining_waits_are_scheduling_latency(con):
    # reclaim: w_r waits 1990..2000 for the preempted pod to drain, beside 4 free GPUs
    assert idle_by_cause(con, "reclaim")[("A100", "scheduling_latency")] == pytest.approx(4 * 10 / H)
    # past-horizon: submitted at 3000, started at 3600, never tried in between
    assert_close(
        idle_by_cause(con, "past-horizon"),
        {("A100", "scheduling_latency"): 8 * 600 / H, ("A100", "no_demand"): 8 * 3000 / H},
    )


def test_an_admitted_but_unplaceable_workload_claims_only_what_it_could_use(con):
    # g (2 × 8, admitted) cannot be placed beside 8 free GPUs (4 a node): even packed its 16
    # need more than the 8 free, so it claims no fragmentation; w_q's quota wait (4 GPUs) fits
    # one pod a node: quota 4 GPU-h, and g's shortfall takes the other 4 (before: fragmentation 8)
    assert_close(idle_by_cause(con, "admitted-unplaced"),
                 {("A100", "quota"): 4.0, ("A100", "capacity_shortfall"): 4.0})


def test_an_admitted_workload_not_tried_yet_comes_before_quota(con):
    # w_adm admitted 0..1800 beside 4 free GPUs: scheduling_latency 2 GPU-h; w_q gets none
    assert_close(idle_by_cause(con, "admitted-latency"), {("A100", "scheduling_latency"): 2.0})


def test_quota_idle_only_where_the_waiting_shape_fits(con):
    # 4 free GPUs on each of two nodes: 1 × 8 and 3 × 4 fit nowhere (first half hour: no
    # quota), 2 × 4 fits one pod a node (second half hour: 8 GPUs × 0.5 h); 3 × 4 on A100 or
    # H100 fits 2 + 1 pods, never 3 on one model. The 3 × 4 shapes ask 12 GPUs, more than the
    # 8 free A100 or 4 free H100 GPUs: capacity shortfall where quota claims none (before:
    # no_demand)
    assert_close(
        idle_by_cause(con, "quota-fit"),
        {("A100", "quota"): 4.0, ("A100", "capacity_shortfall"): 4.0, ("H100", "capacity_shortfall"): 4.0},
    )
    # the fit table: pods of each waiting size that fit on the model's free GPUs
    assert rows(
        con,
        """select gpu_model, gpus_per_pod, start_s, end_s, fit_pods from int_shape_fit
           where run_id = 'quota-fit' order by all""",
    ) == [("A100", 4.0, 0.0, 3600.0, 2), ("A100", 8.0, 0.0, 3600.0, 0),
          ("H100", 4.0, 0.0, 3600.0, 1), ("H100", 8.0, 0.0, 3600.0, 0)]
    # every waiting size: admitted-unplaced's gang of 8-GPU pods fits none on two half-held
    # nodes, whose 8 free GPUs are all unusable by it
    assert rows(
        con,
        """select gpus_per_pod, fit_pods, unfit_free_gpus, free_gpus from int_shape_fit
           where run_id = 'admitted-unplaced' order by all""",
    ) == [(4.0, 2, 0.0, 8.0), (8.0, 0, 8.0, 8.0)]


def test_shared_device_slack_is_its_own_cause(con):
    # 0.25 + 0.5 of a T4 (no fractional request waits): its unshared quarter
    assert idle_by_cause(con, "fractional")[("T4", "shared_device_slack")] == pytest.approx(0.25)
    assert_close(
        idle_by_cause(con, "cause-owners"),
        {
            ("A100", "shared_device_slack"): 0.5,
            ("A100", "gang_barrier"): 2.0,
            ("A100", "quota"): 2.0,
            ("A100", "no_demand"): 2.0,
        },
    )


# --- showback and chargeback ---------------------------------------------------------------------


def test_a_team_pays_only_the_idle_of_the_periods_and_models_it_used(con):
    # window: team-a the A100 idle of hour 0 (a1's 4 and a2's 8 GPU-h at $2), team-b the H100 idle
    # of hour 1 (4 GPU-h at $4); the H100 idle of hour 0 and the A100 idle of hour 1 stay with the
    # platform
    assert_close(charged(con, "window", "window", "idle_share_gpu_hours"),
                 {"__idle__": 8.0 + 16.0, "team-a": 12.0, "team-b": 4.0})
    assert_close(charged(con, "window", "window"), {"__idle__": 32.0 + 32.0, "team-a": 8.0 + 24.0,
                                                    "team-b": 16.0 + 16.0})
    # per cell: team-a carries nothing in hour 1, nothing of the H100s
    assert rows(
        con,
        """select charge_period_start, gpu_model, sum(idle_share_cost) from fct_chargeback
           where run_id = 'window' and idle_policy = 'window' and tenant = 'team-a'
             and idle_share_cost > 0 group by all""",
    ) == [(datetime(2026, 11, 2, 0), "A100", pytest.approx(24.0))]
    # showback: every idle dollar on the platform line
    assert_close(charged(con, "window", "separate"), {"__idle__": 128.0 - 24.0, "team-a": 8.0, "team-b": 16.0})
    # the rule per workload adds up to the team's
    assert rows(
        con,
        """select workload_id, idle_share_cost, cost_with_idle from fct_workloads
           where run_id = 'window' order by all""",
    ) == [("w_a", pytest.approx(24.0), pytest.approx(32.0)), ("w_b", pytest.approx(16.0), pytest.approx(32.0))]


def test_idle_by_node_keeps_an_unused_nodes_idle_on_the_platform_line(con):
    # by node, team-a carries a1's idle only: a2 nobody used
    assert_close(charged(con, "window", "node"), {"__idle__": 128.0 - 16.0 - 32.0, "team-a": 8.0 + 8.0,
                                                  "team-b": 16.0 + 16.0})


def test_cause_aware_showback_charges_each_cause_to_its_owner(con):
    # usage: team-a $2, team-b $4, team-c $1, team-d $4 (its reserved pod); idle: gang_barrier 2,
    # quota 2, slack 0.5 and no_demand 2 GPU-h at $2
    assert_close(
        charged(con, "cause-owners", "cause", "idle_share_cost"),
        {
            "team-a": 4.0,  # the quota it owned and left unused kept w_q waiting
            "team-d": 4.0,  # its gang at the barrier
            "team-c": 1.0,  # the fractional tenant of the shared device
            "team-b": 0.0,
            "__idle__": 4.0,  # no demand: the platform
        },
    )
    # the window rule for the same cell: $13 of idle in proportion to use (2 : 4 : 1 : 4)
    assert_close(
        charged(con, "cause-owners", "window", "idle_share_cost"),
        {"team-a": 13 * 2 / 11, "team-b": 13 * 4 / 11, "team-c": 13 * 1 / 11, "team-d": 13 * 4 / 11},
    )
    # a cause without owners falls back to the window rule: kueue's quota owners (cq-a, cq-b)
    # are the teams whose workloads queue there
    assert rows(
        con,
        """select idle_policy, tenant from int_idle_shares
           where run_id = 'cause-owners' and idle_policy = 'cause' and tenant <> '__idle__'
           group by all order by all""",
    ) == [("cause", "team-a"), ("cause", "team-c"), ("cause", "team-d")]


def test_every_policy_charges_the_whole_bill(con):
    totals = dict(rows(
        con,
        """select idle_policy, sum(charged_cost) from fct_chargeback where run_id = 'cpu-memory'
           group by all""",
    ))
    bill = rows(con, "select sum(EffectiveCost) from focus_cost_records where x_RunId = 'cpu-memory' "
                     "and ChargeCategory = 'Usage'")[0][0]
    assert totals.keys() == {"separate", "window", "node", "cause"}
    assert all(value == pytest.approx(bill) for value in totals.values())


# --- phases, borrowing, preemption ---------------------------------------------------------------


def test_run_phases_come_from_the_submission_window(con):
    assert rows(con, "select * from int_run_phases where run_id = 'phases'") == [
        ("phases", 0.0, 37800.0, 3600.0, 39600.0)
    ]
    phases = dict(rows(
        con,
        """select hour(ChargePeriodStart), any_value(x_Phase) from focus_cost_records
           where x_RunId = 'phases' group by all order by 1""",
    ))
    assert phases == {0: "warmup", **{h: "steady" for h in range(1, 11)}, 11: "drain"}
    approx_rows(
        rows(
            con,
            """select scope, value from fct_unit_economics
               where run_id = 'phases' and metric = 'gpu_allocation_rate' order by scope""",
        ),
        [("all", 2.0 / 96), ("phase:drain", 0.5 / 8), ("phase:steady", 0.5 / 80), ("phase:warmup", 1.0 / 8)],
    )
    assert rows(con, "select distinct phase from fct_chargeback where run_id = 'phases' order by all") == [
        ("drain",), ("steady",), ("warmup",)
    ]


def test_borrowed_is_the_share_above_nominal_quota(con):
    # cq-b owns 4 GPUs and holds 8 from 0 to 2000: 4 × 2000 s above its nominal quota, carried
    # by the workload Kueue admitted `Borrowing` (w_v, 4 × 2000 s), none by w_o (admitted within
    # nominal quota)
    approx_rows(
        rows(
            con,
            """select x_Workload, sum(PricingQuantity) from focus_cost_records
               where x_RunId = 'reclaim' and x_Borrowed group by all order by all""",
        ),
        [("w_v", 4 * 2000 / H)],
    )
    queue = rows(
        con,
        """select cluster_queue, sum(borrowed_gpu_hours), sum(unused_nominal_gpu_hours)
           from int_queue_usage where run_id = 'reclaim' group by all order by all""",
    )
    approx_rows(queue, [("cq-a", 0.0, 4 * 2000 / H), ("cq-b", 4 * 2000 / H, 0.0)])


def test_lost_work_names_its_preemptor_and_reclaim_moves_it(con):
    lost = 4 * 200 / H  # w_v's work since its checkpoint at 1800
    approx_rows(
        rows(
            con,
            """select x_Workload, x_Tenant, x_PreemptedBy, x_PreemptedByTenant, sum(PricingQuantity),
                      sum(EffectiveCost)
               from focus_cost_records
               where x_RunId = 'reclaim' and x_UsageClass = 'lost_to_preemption' group by all""",
        ),
        [("w_v", "team-b", "w_r", "team-a", lost, 2.0 * lost)],
    )
    # only lost work names a preemptor
    assert rows(
        con,
        """select count(*) from focus_cost_records
           where x_PreemptedBy is not null and x_UsageClass <> 'lost_to_preemption'""",
    ) == [(0,)]
    assert rows(con, "select * from int_preemptions where run_id = 'reclaim'") == [
        ("reclaim", "w_v", "team-b", "w_r", "team-a", True)
    ]
    # the reclaim option: the victim's lost work is charged to the reclaimer (every idle dollar of
    # the hour went to the node's users: no platform line)
    assert_close(charged(con, "reclaim", "window", "reclaim_adjustment_cost"),
                 {"team-a": 2.0 * lost, "team-b": -2.0 * lost})


def test_checkpoint_loss_per_eviction(con):
    approx_rows(
        rows(
            con,
            """select run_id, workload_id, attempt, end_event, pods_evicted, preemptor, preemptor_tenant,
                      reclaim, lost_gpu_hours, lost_cost
               from fct_evictions
               where run_id in ('reclaim', 'preempted', 'pod-by-pod') order by all""",
        ),
        [
            # a gang that never ran whole loses nothing it had not already wasted waiting
            ("pod-by-pod", "w1", 0, "timed_out", 2, None, None, False, 0.0, 0.0),
            # no ClusterQueues: another team's workload is a reclaim
            ("preempted", "w1", 0, "preempted", 1, "w2", "team-b", True, 2 * 200 / H, 2.0 * 2 * 200 / H),
            ("reclaim", "w_v", 0, "preempted", 1, "w_r", "team-a", True, 4 * 200 / H, 2.0 * 4 * 200 / H),
        ],
    )


# --- commitments and FinOps metrics --------------------------------------------------------------


def metric(con, run_id: str, name: str, scope: str = "all") -> float:
    found = rows(
        con,
        "select value from fct_unit_economics where run_id = ? and metric = ? and scope = ?",
        [run_id, name, scope],
    )
    assert len(found) == 1, (run_id, name, scope, found)
    return found[0][0]


def test_commitments_pool_per_sku_with_coverage_and_sunk_idle(con):
    # c1 and c2 are one pool; c2 idle while w_s ran on the on-demand s1
    assert metric(con, "pool", "commitment_utilization") == pytest.approx(8 / 16)
    # coverage: covered ÷ commitment-eligible usage (8 covered + 4 on-demand GPU-h used)
    assert metric(con, "pool", "commitment_coverage") == pytest.approx(8 / 12)
    assert rows(
        con,
        """select committed_quantity, on_demand_capacity_quantity, eligible_quantity, coverage,
                  utilization
           from fct_commitment_utilization where run_id = 'pool-moved'""",
    ) == [(16.0, 8.0, 12.0, 1.0, 12 / 16)]
    assert metric(con, "pool", "coverable_on_demand_gpu_hours") == pytest.approx(4.0)
    assert metric(con, "pool", "coverable_on_demand_cost") == pytest.approx(16.0)
    # idle split: c2's 8 GPU-h are paid whatever happens, s1's 4 could be given back
    assert metric(con, "pool", "idle_cost", "idle:sunk") == pytest.approx(24.0)
    assert metric(con, "pool", "idle_cost", "idle:avoidable") == pytest.approx(16.0)
    assert rows(
        con,
        """select CommitmentDiscountId, count(*) from focus_cost_records
           where x_RunId = 'pool' and ChargeCategory = 'Purchase' group by all""",
    ) == [("k8s://pool/commitment/gpu-h100", 1)]


@pytest.mark.parametrize(
    ("run_id", "covered", "eligible", "utilization"),
    [
        # hand-computed from each scenario's comment (tests/pipeline/scenarios.py)
        ("pool", 8.0, 8.0 + 4.0, 8 / 16),  # c2 Unused, w_s on demand
        ("pool-moved", 12.0, 12.0, 12 / 16),  # w_s on the commitment: all usage covered
        ("pool-spot", 6.0, 6.0 + 2.0, 6 / 8),  # the 8 spot GPU-h and 2 Unused are not usage here
    ],
)
def test_coverage_is_covered_usage_over_eligible_usage_beside_utilization(con, run_id, covered, eligible,
                                                                         utilization):
    # FinOps' commitment discount coverage on the records utilization reads: Used ÷ (Used +
    # Standard usage); spot-served usage is not commitment-eligible, FOCUS Unused rows are not usage
    assert rows(
        con,
        """select used_quantity, eligible_quantity, coverage, utilization
           from fct_commitment_utilization where run_id = ?""",
        [run_id],
    ) == [(pytest.approx(covered), pytest.approx(eligible), pytest.approx(covered / eligible),
           pytest.approx(utilization))]
    assert metric(con, run_id, "commitment_coverage") == pytest.approx(covered / eligible)
    assert metric(con, run_id, "commitment_utilization") == pytest.approx(utilization)


def test_effective_savings_rate_is_list_minus_effective_over_list_wherever_pods_ran(con):
    # the capacity paid at list: 24 GPU-h × $4 = $96; it cost 16 × $3 (the commitment) + 8 × $4:
    # (96 − 80) / 96, the same whether w_s ran on the on-demand node or on the idle commitment
    assert metric(con, "pool", "effective_savings_rate") == pytest.approx((96 - 80) / 96)
    assert metric(con, "pool-moved", "effective_savings_rate") == pytest.approx((96 - 80) / 96)
    # the commitment's part: ContractedCost (list: no other negotiated rate) against EffectiveCost
    assert metric(con, "pool", "total_contracted_cost") == pytest.approx(96.0)
    assert metric(con, "pool", "commitment_savings_rate") == pytest.approx((96 - 80) / 96)
    # spot only saves: the fractional run on a spot T4 (list 0.5, spot 0.2)
    assert metric(con, "fractional", "effective_savings_rate") == pytest.approx((0.5 - 0.2) / 0.5)


@pytest.mark.parametrize(("run_id", "over_list", "over_contract"), [
    # the pool: list 24 GPU-h x $4 = $96 = contracted (no negotiated rate; ContractedCost excludes
    # the commitment), effective 16 x $3 + 8 x $4 = $80: the commitment's saving on both bases
    ("pool", (96 - 80) / 96, (96 - 80) / 96),
    # the spot T4 (list $0.5, spot $0.2): the spot price is the contracted rate, so the whole
    # saving is over list and none is over contract
    ("fractional", (0.5 - 0.2) / 0.5, 0.0),
])
def test_the_report_shows_esr_on_both_bases_named(con, run_id, over_list, over_contract):
    # the FinOps Foundation's ESROverList and ESROverContract, over the same records the report
    # and the Overview page read (dashboards.data.savings)
    from dashboards import data

    saving = data.savings(con, data.Filters(run_id))
    assert saving["esr_over_list"] == pytest.approx(over_list)
    assert saving["esr_over_contract"] == pytest.approx(over_contract)
    assert saving["esr_over_list"] == pytest.approx(metric(con, run_id, "effective_savings_rate"))
    assert saving["esr_over_contract"] == pytest.approx(metric(con, run_id, "commitment_savings_rate"))


def test_contracted_price_of_committed_usage_excludes_the_commitment(con):
    # FOCUS: ContractedUnitPrice excludes commitment discounts (the list price here); the
    # commitment rate is in EffectiveCost; BilledCost 0 (the Purchase row billed it)
    assert rows(
        con,
        """select x_Node, CommitmentDiscountStatus, ListUnitPrice, ContractedUnitPrice,
                  sum(PricingQuantity), sum(ContractedCost), sum(EffectiveCost), sum(BilledCost)
           from focus_cost_records
           where x_RunId = 'pool' and ChargeCategory = 'Usage' group by all order by all""",
    ) == [
        ("c1", "Used", 4.0, 4.0, 8.0, 32.0, 24.0, 0.0),
        ("c2", "Unused", 4.0, 4.0, 8.0, 32.0, 24.0, 0.0),
        ("s1", None, 4.0, 4.0, 8.0, 32.0, 32.0, 32.0),
    ]
    # the purchase: billed at the commitment's rate, its contracted cost = what it billed
    assert rows(
        con,
        """select ContractedUnitPrice, ContractedCost, BilledCost, EffectiveCost from focus_cost_records
           where x_RunId = 'pool' and ChargeCategory = 'Purchase'""",
    ) == [(3.0, 48.0, 48.0, 0.0)]


def test_gpu_hours_demanded_while_pending(con):
    # w2 waits for quota 600 s (4 GPUs), w3 from 1200 to the end (2 GPUs), valued at the A100
    # list price ($2). Hour 0 had 4 × 600 s idle (before w2 started): the 2 GPU-h they demanded
    # there (w2 4 × 600 s, w3 2 × 2400 s) are scaled to it, a third each; hour 1 had 7⅓ idle
    # GPU-h, w3's 2 fit. Capped at the node's 8 GPU-h instead: 4 × 600 s and 2 × 6000 s
    hour_0 = 4 * 600 / H / (4 * 600 / H + 2 * 2400 / H)
    w2, w3 = 4 * 600 / H * hour_0, 2 * 2400 / H * hour_0 + 2.0
    approx_rows(
        rows(
            con,
            """select workload_id, pending_demand_gpu_hours, pending_demand_list_value from fct_workloads
               where run_id = 'kueue' order by all""",
        ),
        [("w1", 0.0, 0.0), ("w2", w2, 2.0 * w2), ("w3", w3, 2.0 * w3)],
    )
    assert metric(con, "kueue", "pending_demand_gpu_hours") == pytest.approx(w2 + w3)
    assert metric(con, "kueue", "pending_demand_list_value") == pytest.approx(2.0 * (w2 + w3))
    # unservable demand is reported apart: w_big waited the whole hour with 8 GPUs
    assert metric(con, "unservable", "unservable_gpu_hours_waited") > 0


def test_pending_demand_is_capped_by_what_the_cluster_could_run(con):
    # one 8-GPU node for an hour: wa (1 × 8) and wb (4 × 8, min_count 1: one pod fits) wait all
    # hour. Fit: wb counts 8 GPUs, not 32; capacity: 8 + 8 demanded against 8 GPU-h, halved
    # (uncapped: 8 + 32 = 40 GPU-h, five times the capacity)
    approx_rows(
        rows(
            con,
            """select workload_id, pending_demand_gpu_hours, pending_demand_list_value from fct_workloads
               where run_id = 'pending-capped' order by all""",
        ),
        [("wa", 4.0, 8.0), ("wb", 4.0, 8.0)],
    )
    assert rows(
        con,
        """select workload_id, period_index, gpu_model, gpu_hours from int_pending_demand_capped
           where run_id = 'pending-capped' order by all""",
    ) == [("wa", 0, "A100", 4.0), ("wb", 0, "A100", 4.0)]
    assert metric(con, "pending-capped", "pending_demand_gpu_hours") == pytest.approx(8.0)


def test_cost_per_training_run_separates_finished_and_failed_and_includes_idle(con):
    # window: each training run carries the idle of its cells
    assert metric(con, "window", "cost_per_training_run", "outcome:finished") == pytest.approx(32.0)
    # preempted: w1 spent GPUs and ends waiting (failed); w2 finished
    assert rows(
        con,
        "select workload_id, outcome from fct_workloads where run_id = 'preempted' order by all",
    ) == [("w1", "failed"), ("w2", "finished")]
    failed, finished = (
        rows(con, "select cost_with_idle from fct_workloads where run_id = 'preempted' and workload_id = ?",
             [w])[0][0]
        for w in ("w1", "w2")
    )
    assert metric(con, "preempted", "cost_per_training_run", "outcome:failed") == pytest.approx(failed)
    assert metric(con, "preempted", "cost_per_training_run", "outcome:finished") == pytest.approx(finished)
    # the node was in use every hour: the two runs' costs with idle are the whole bill
    bill = rows(con, "select sum(EffectiveCost) from focus_cost_records where x_RunId = 'preempted'")[0][0]
    assert "__idle__" not in charged(con, "preempted", "window")
    assert failed + finished == pytest.approx(bill)
