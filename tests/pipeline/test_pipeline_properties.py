"""Properties of random valid event logs (tests/pipeline/random_runs.py), several runs per build:
GPU-hours and cost conserved per node and period, no negative quantity, no GPU allocated twice,
every GPU-second of a workload accounted once, and every FOCUS row check and audit passing in
both layouts."""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_runs import NODES, PERIOD_S, event_logs
from runs import DEFAULT_CPU_MEMORY_PRICES, DEFAULT_PRICES, write_prices

from pipeline.build import build
from pipeline.validate import validate_db

RUNS_PER_BUILD = 3


def unit_price(resource: str, node: str) -> float:
    model, _, category, _, _ = NODES[node]
    prices = DEFAULT_PRICES[model] if resource == "gpu" else DEFAULT_CPU_MEMORY_PRICES[(resource, "")]
    return prices[{"Standard": 0, "Committed": 1, "Dynamic": 2}[category]]


def capacity(resource: str, node: str) -> float:
    _, gpus, _, cpu_milli, memory_mib = NODES[node]
    return {"gpu": gpus, "cpu": cpu_milli / 1000, "memory": memory_mib / 1024}[resource]


def held_from_events(builder) -> dict[str, float]:
    """GPU-hours each workload held, straight from the event list."""
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
    return {w: hours for w, hours in totals.items() if hours > 0}


@st.composite
def builds(draw) -> list:
    return [draw(event_logs(run_id=f"r{i}")) for i in range(RUNS_PER_BUILD)]


@pytest.mark.parametrize("split", [False, True], ids=["focus-1.2", "focus-1.3-split"])
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(builders=builds())
def test_random_logs_conserve_hours_and_cost(split, builders):
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        run_dirs = [builder.write(tmp_path / "runs") for builder in builders]
        db = tmp_path / "f.duckdb"
        # build() itself fails on any audit: capacity per node-period and resource, no
        # over-allocation, cost identities, commitments amortized exactly, showback balanced
        build(run_dirs, write_prices(tmp_path / "p.csv"), db, charge_period_s=PERIOD_S,
              show_progress=False, focus_split=split)
        assert validate_db(db) == []
        con = duckdb.connect(str(db), read_only=True)
        try:
            check_conservation(con)
            check_no_gpu_allocated_twice(con, builders)
            for builder in builders:
                actual = dict(con.execute(
                    """select x_Workload, sum(PricingQuantity) from focus_cost_records
                       where x_RunId = ? and x_Workload is not null and x_Resource = 'gpu'
                       group by all""", [builder.run_id]).fetchall())
                expected = held_from_events(builder)
                assert actual.keys() == expected.keys()
                for workload_id, hours in expected.items():
                    assert actual[workload_id] == pytest.approx(hours, abs=1e-9)
        finally:
            con.close()


def check_conservation(con) -> None:
    per_node_period = con.execute(
        """select x_RunId, x_Node, x_Resource, ChargePeriodStart, sum(PricingQuantity),
                  sum(EffectiveCost), min(PricingQuantity), min(EffectiveCost), min(BilledCost)
           from focus_cost_records where ChargeCategory = 'Usage' group by all"""
    ).fetchall()
    priced = [(n, r) for n in NODES for r in ("gpu", "cpu", "memory") if capacity(r, n) > 0]
    assert len(per_node_period) == RUNS_PER_BUILD * len(priced) * 3
    for _, node, resource, _, quantity, cost, smallest, cheapest, billed in per_node_period:
        hours = PERIOD_S / 3600
        assert quantity == pytest.approx(capacity(resource, node) * hours, rel=1e-9)
        assert cost == pytest.approx(capacity(resource, node) * hours * unit_price(resource, node), rel=1e-9)
        assert min(smallest, cheapest, billed) >= 0
    # idle causes are never negative, and each node-period's causes fill its idle exactly
    assert con.execute("select count(*) from int_idle_by_cause where gpu_hours < 0").fetchone() == (0,)
    off = con.execute(
        """select count(*) from (
               select run_id, node, period_index, any_value(c.idle_gpu_hours) as idle_gpu_hours,
                      sum(i.gpu_hours) as by_cause
               from int_node_capacity_periods as c
               join int_idle_by_cause as i using (run_id, node, period_index)
               group by run_id, node, period_index)
           where abs(idle_gpu_hours - by_cause) > 1e-9"""
    ).fetchone()
    assert off == (0,)


def check_no_gpu_allocated_twice(con, builders) -> None:
    """At no instant do a node's classified intervals hold more GPUs than it has, and no pod is
    in two usage classes at once."""
    intervals = con.execute(
        """select run_id, node, workload_id, pod_index, epoch_ms(start_ts), epoch_ms(end_ts), gpus
           from fct_pod_intervals order by all"""
    ).fetchall()
    by_pod: dict[tuple, list] = defaultdict(list)
    by_node: dict[tuple, list] = defaultdict(list)
    for run_id, node, workload_id, pod, start, end, gpus in intervals:
        by_pod[(run_id, workload_id, pod)].append((start, end))
        by_node[(run_id, node)].append((start, end, gpus))
    for spans in by_pod.values():
        for (_, first_end), (second_start, _) in zip(spans, spans[1:], strict=False):
            assert first_end <= second_start
    for (_, node), spans in by_node.items():
        for instant, _, _ in spans:
            held = sum(g for s, e, g in spans if s <= instant < e)
            assert held <= NODES[node][1] + 1e-9
    # and the log the generator wrote never placed more than a node has
    for builder in builders:
        for node, placed in builder.placed.items():
            for start, _, _ in placed:
                assert sum(g for s, e, g in placed if s <= start < e) <= NODES[node][1] + 1e-9
