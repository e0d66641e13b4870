"""Property test: random valid event logs conserve GPU-hours and money, never over-allocate."""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runs import DEFAULT_PRICES, RunBuilder, write_prices

from pipeline.build import build

NODES = {"n1": ("A100", 4, "Standard"), "n2": ("T4", 2, "Dynamic")}
HORIZON_S = 3 * 1800.0


@st.composite
def event_logs(draw) -> RunBuilder:
    """Up to 6 single-pod workloads, each on one node in its own time slot (no overlaps)."""
    builder = RunBuilder(horizon_s=HORIZON_S, run_id="random")
    for name, (model, gpus, category) in NODES.items():
        builder.node(name, model, gpus, pricing_category=category)
    placements = []
    for node, (_, node_gpus, _) in NODES.items():
        # cut the window into slots; each slot holds at most one pod on this node
        cuts = sorted(draw(st.sets(st.integers(1, int(HORIZON_S) - 1), max_size=5)))
        bounds = [0, *cuts, int(HORIZON_S)]
        for slot_start, slot_end in zip(bounds, bounds[1:], strict=False):
            if draw(st.booleans()):
                gpus = draw(st.sampled_from([0.25, 0.5, 1.0, float(node_gpus)]))
                ends = draw(st.sampled_from(["finished", "preempted", "timed_out", "open"]))
                if ends == "open" and slot_end != int(HORIZON_S):
                    ends = "finished"  # only the last slot may still run at the horizon
                placements.append((slot_start, slot_end, node, gpus, ends))
    events = []
    for index, (start, end, node, gpus, ends) in enumerate(placements):
        workload_id = f"w{index}"
        builder.workload(
            workload_id, pods=1, gpus_per_pod=gpus, tenant=f"t{index % 2}",
            checkpoint_interval_s=draw(st.sampled_from([None, 300.0])),
            gpu_model=NODES[node][0] if index % 3 else None, submit_time_s=max(start - 60, 0),
        )
        events.append((max(start - 60, 0), 0, "submitted", workload_id, None, None, None))
        events.append((start, 1, "started", workload_id, 0, node, gpus))
        if ends != "open":
            events.append((end, 0, ends, workload_id, 0, node, gpus))
            if ends != "finished":
                events.append((end, 1, "requeued", workload_id, None, None, None))
    # time order; at equal times releases before starts, like the scheduler
    for time_s, _, event, workload_id, pod, node, gpus in sorted(events, key=lambda e: (e[0], e[1])):
        builder.event(time_s, event, workload_id, pod=pod, node=node, gpus=gpus)
    return builder


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(builder=event_logs())
def test_random_logs_conserve_hours_and_cost(builder):
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        run_dir = builder.write(tmp_path)
        db = tmp_path / "f.duckdb"
        # build() runs every audit (capacity per node-period, no over-allocation, identities)
        build([run_dir], write_prices(tmp_path / "p.csv"), db, charge_period_s=1800, show_progress=False)
        con = duckdb.connect(str(db), read_only=True)
        try:
            per_node_period = con.execute(
                """select x_Node, ChargePeriodStart, sum(ConsumedQuantity), sum(EffectiveCost),
                          min(ConsumedQuantity), count(*)
                   from focus_cost_records group by all"""
            ).fetchall()
            assert len(per_node_period) == len(NODES) * 3
            for node, _, hours, cost, smallest, _ in per_node_period:
                model, gpus, category = NODES[node]
                unit = DEFAULT_PRICES[model][0 if category == "Standard" else 2]
                assert abs(hours - gpus * 0.5) <= 1e-9
                assert abs(cost - gpus * 0.5 * unit) <= 1e-9
                assert smallest >= 0
        finally:
            con.close()
