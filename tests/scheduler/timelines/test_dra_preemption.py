"""GPUs claimed through DRA are not preempted by kube-scheduler in v1.35-v1.37.

The DRA documentation lists preemption among its limitations, and KEP-5690 (DRA
preemption) targets alpha in v1.38: in preemption's simulation a victim's ResourceClaim
stays allocated, so removing the victim frees no device. gang-v1.37 claims a group's GPUs
through DRA (`group_device_claim`): a high-priority group waits for the GPUs to come free.
`dra_preemption = true` models KEP-5690 for what-ifs. Kueue's preemption evicts workloads
by quota, not by device, and is unaffected.
"""

import pytest

from tests.scheduler.scenario import (
    GANG_V137_PER_POD_CLAIMS,
    dra_preemption,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

WORKLOADS = [job("low", 0, 5000, priority=1), job("urgent", 100, 500, priority=9)]


@pytest.mark.parametrize(("profile", "urgent_starts"), [
    pytest.param(lowest_index("gang-v1.37"), 5000.0, id="gang-v1.37 (DRA claims): no preemption, urgent waits"),
    pytest.param(lowest_index(dra_preemption("gang-v1.37")), 130.0, id="dra_preemption (KEP-5690): low is preempted"),
    pytest.param(lowest_index(GANG_V137_PER_POD_CLAIMS), 130.0, id="GPUs as a device plugin's count: preempted"),
    pytest.param("kube-default", 130.0, id="kube-default (no DRA): per-pod preemption"),
])
def test_dra_claimed_gpus_are_not_preempted_before_kep_5690(tmp_path, profile, urgent_starts):
    rows = replay_rows(tmp_path, [node("n1")], WORKLOADS, profile)
    assert [t[0] for t in story(rows, events=("started",)) if t[2] == "urgent"] == [urgent_starts]
    assert sum(r["event"] == "preempted" for r in rows) == (0 if urgent_starts == 5000.0 else 1)
