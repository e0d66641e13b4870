"""Conservation of GPU-hours and money, checked against an independent Python computation."""

from __future__ import annotations

from collections import defaultdict

import pytest
import scenarios
from runs import DEFAULT_PRICES


def held_gpu_hours_from_events(builder) -> dict[str, float]:
    """GPU-hours each workload held, straight from the builder's event list."""
    holding: dict[tuple[str, int], tuple[float, float]] = {}
    totals: dict[str, float] = defaultdict(float)
    for event in builder.events:
        key = (event["workload_id"], event["pod_index"])
        if event["event"] in ("reserved", "started") and key not in holding:
            holding[key] = (event["time_s"], event["gpus"])
        elif event["event"] in ("finished", "preempted", "timed_out") and key in holding:
            start, gpus = holding.pop(key)
            totals[key[0]] += gpus * (event["time_s"] - start) / 3600
    for (workload_id, _), (start, gpus) in holding.items():
        totals[workload_id] += gpus * (builder.horizon_s - start) / 3600
    return dict(totals)


def test_every_node_period_sums_to_capacity(con):
    sums = con.execute(
        """select x_RunId, x_Node, ChargePeriodStart, sum(PricingQuantity), any_value(n.gpus)
           from focus_cost_records as r
           join dim_nodes as n on n.run_id = r.x_RunId and n.node = r.x_Node
           where r.ChargeCategory = 'Usage' and r.x_Resource = 'gpu'
           group by all"""
    ).fetchall()
    # every GPU node of every run, every period (c1 has no GPU)
    expected = sum(
        sum(1 for node in builder.nodes if node["gpus"]) * int(-(-builder.horizon_s // 3600))
        for builder in (make() for make in scenarios.ALL)
    )
    assert len(sums) == expected
    for run_id, node, period, consumed, gpus in sums:
        assert abs(consumed - gpus * 1.0) <= 1e-9, (run_id, node, period)


def test_cpu_and_memory_capacity_is_conserved_too(con):
    sums = con.execute(
        """select x_Node, x_Resource, ChargePeriodStart, sum(PricingQuantity)
           from focus_cost_records
           where x_RunId = 'cpu-memory' and x_Resource <> 'gpu' group by all order by all"""
    ).fetchall()
    capacity = {("c1", "cpu"): 16.0, ("c1", "memory"): 64.0, ("g1", "cpu"): 32.0, ("g1", "memory"): 256.0}
    assert len(sums) == 4 * 2
    for node, resource, _, quantity in sums:
        assert quantity == pytest.approx(capacity[(node, resource)])


def test_total_effective_cost_equals_capacity_times_price_to_the_cent(con):
    for run_id, gpu_model, category, cost, hours in con.execute(
        """select x_RunId, x_GpuModel, PricingCategory, sum(EffectiveCost), any_value(r.horizon_s) / 3600
           from focus_cost_records join dim_runs as r on r.run_id = x_RunId
           where ChargeCategory = 'Usage' and x_Resource = 'gpu' group by all"""
    ).fetchall():
        list_price, contracted, spot = DEFAULT_PRICES[gpu_model]
        unit = {"Standard": list_price, "Committed": contracted, "Dynamic": spot}[category]
        gpus = con.execute(
            "select sum(gpus) from dim_nodes where run_id = ? and gpu_model = ? and pricing_category = ?",
            [run_id, gpu_model, category],
        ).fetchone()[0]
        assert round(cost, 2) == round(gpus * hours * unit, 2), run_id


def test_allocated_hours_match_an_independent_computation(con):
    for make in scenarios.ALL:
        builder = make()
        expected = held_gpu_hours_from_events(builder)
        actual = dict(
            con.execute(
                """select x_Workload, sum(ConsumedQuantity) from focus_cost_records
                   where x_RunId = ? and x_Workload is not null and x_Resource = 'gpu'
                   group by all""",
                [builder.run_id],
            ).fetchall()
        )
        assert actual.keys() == expected.keys()
        for workload_id, hours in expected.items():
            assert actual[workload_id] == pytest.approx(hours, abs=1e-12)


def test_cost_identities_hold_exactly(con):
    bad = con.execute(
        """select count(*) from focus_cost_records
           where ListCost != ListUnitPrice * PricingQuantity
              or ContractedCost != ContractedUnitPrice * PricingQuantity
              or (x_Workload is not null and ConsumedQuantity != PricingQuantity)
              or (x_UsageClass = 'idle' and ConsumedQuantity != 0)
              or (ChargeCategory = 'Usage' and CommitmentDiscountId is null and EffectiveCost != ContractedCost)
              or (ChargeCategory = 'Usage' and CommitmentDiscountId is not null and EffectiveCost > ContractedCost)
              or (CommitmentDiscountId is null and BilledCost != ContractedCost)"""
    ).fetchone()[0]
    assert bad == 0
    # the invoice: what Standard and spot nodes used, plus the commitments' purchases
    billed, purchases = con.execute(
        """select sum(BilledCost), sum(BilledCost) filter (where ChargeCategory = 'Purchase')
           from focus_cost_records where x_RunId = 'reserved'"""
    ).fetchone()
    assert billed == purchases == 48.0


def test_consumed_quantity_is_what_workloads_used(con):
    # idle capacity consumed nothing: 0 on hourly-paid nodes, null on an Unused commitment (FOCUS);
    # so Σ ConsumedQuantity is the GPU-hours workloads held and Σ PricingQuantity the capacity
    consumed, priced, held = con.execute(
        """select sum(ConsumedQuantity), sum(PricingQuantity),
                  sum(PricingQuantity) filter (where x_Workload is not null)
           from focus_cost_records
           where ChargeCategory = 'Usage' and x_Resource = 'gpu' and x_RunId = 'preempted'"""
    ).fetchone()
    assert priced == pytest.approx(16.0)
    assert consumed == held == pytest.approx(1.0 + 400 / 3600 + 6 * 3000 / 3600)
    assert con.execute(
        """select distinct CommitmentDiscountStatus, ConsumedQuantity from focus_cost_records
           where x_UsageClass = 'idle' and x_Resource = 'gpu' order by all"""
    ).fetchall() == [("Unused", None), (None, 0.0)]


def test_no_negative_quantities(con):
    assert con.execute(
        """select count(*) from focus_cost_records
           where ConsumedQuantity < 0 or PricingQuantity < 0 or EffectiveCost < 0 or BilledCost < 0"""
    ).fetchone()[0] == 0
