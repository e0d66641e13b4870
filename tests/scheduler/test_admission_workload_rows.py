"""Kueue's view of a workload built through the replay's shape table (`ShapeTable.by_row`:
the requests and shape kept per trace row's request fields) equals the one built afresh."""

from __future__ import annotations

import itertools

from scheduler.admission.workloads import ShapeTable, admission_workload
from scheduler.model.workload import Workload
from tests.scheduler.admission_state import workload_run


def _rows() -> list[Workload]:
    fields = itertools.product((0.5, 1.0, 8.0), (0, 4000), (0, 65536), (1, 4), (1, 2), ((), ("H100",)), (0, 5),
                               (None, "rack"))
    return [Workload(f"w{i}", float(i), 60.0, pods, min_count, gpus, models, cpu, memory, priority=priority,
                     topology_required=topology, topology_preferred=None if topology else "block")
            for i, (gpus, cpu, memory, pods, min_count, models, priority, topology) in enumerate(fields)]


def test_workloads_of_one_row_shape_get_what_they_would_get_afresh() -> None:
    for uses_tas in (False, True):
        shapes = ShapeTable()
        rows = _rows()
        for seq, workload in enumerate(rows + rows[::-1]):  # every row shape seen twice
            run = workload_run(workload, seq)
            kept = admission_workload(run, "ns/q", "cq", uses_tas=uses_tas, shapes=shapes)
            fresh = admission_workload(run, "ns/q", "cq", uses_tas=uses_tas)
            assert kept.requests == fresh.requests
            assert list(kept.requests) == list(fresh.requests)  # the order too: assignment reads it
            assert kept.shape == fresh.shape and kept.shape is shapes.of(fresh.shape_key())
            assert (kept.min_count, kept.topology_request, kept.models, kept.priority, kept.pods) == (
                fresh.min_count, fresh.topology_request, fresh.models, fresh.priority, fresh.pods)
        assert len(shapes.by_row) <= len(rows)  # one entry per row shape, however often seen
