"""Conservation of GPU-hours and money, checked against an independent Python computation."""

from __future__ import annotations

from collections import defaultdict

import duckdb
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


@pytest.fixture(scope="module")
def con(built):
    connection = duckdb.connect(str(built.db), read_only=True)
    yield connection
    connection.close()


def test_every_node_period_sums_to_capacity(con):
    sums = con.execute(
        """select x_RunId, x_Node, ChargePeriodStart, sum(ConsumedQuantity), any_value(n.gpus)
           from focus_cost_records as r
           join dim_nodes as n on n.run_id = r.x_RunId and n.node = r.x_Node
           group by all"""
    ).fetchall()
    assert len(sums) == 6 * 2  # 6 runs × 1 node × 2 hours
    for run_id, node, period, consumed, gpus in sums:
        assert abs(consumed - gpus * 1.0) <= 1e-9, (run_id, node, period)


def test_total_effective_cost_equals_capacity_times_price_to_the_cent(con):
    for run_id, gpu_model, category, cost in con.execute(
        """select x_RunId, x_GpuModel, PricingCategory, sum(EffectiveCost)
           from focus_cost_records group by all"""
    ).fetchall():
        list_price, contracted, spot = DEFAULT_PRICES[gpu_model]
        unit = {"Standard": list_price, "Committed": contracted, "Dynamic": spot}[category]
        gpus = con.execute(
            "select sum(gpus) from dim_nodes where run_id = ?", [run_id]
        ).fetchone()[0]
        assert round(cost, 2) == round(gpus * 2 * unit, 2), run_id


def test_allocated_hours_match_an_independent_computation(con):
    for make in scenarios.ALL:
        builder = make()
        expected = held_gpu_hours_from_events(builder)
        actual = dict(
            con.execute(
                """select x_Workload, sum(ConsumedQuantity) from focus_cost_records
                   where x_RunId = ? and x_Workload is not null group by all""",
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
              or BilledCost != ContractedCost or EffectiveCost != ContractedCost
              or ConsumedQuantity != PricingQuantity"""
    ).fetchone()[0]
    assert bad == 0


def test_no_negative_quantities(con):
    assert con.execute(
        "select count(*) from focus_cost_records where ConsumedQuantity < 0 or EffectiveCost < 0"
    ).fetchone()[0] == 0
