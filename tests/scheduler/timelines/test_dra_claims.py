"""Golden timelines of GPUs claimed through DRA (docs/dra.md): a MIG-partitioned pool with
slice and whole-GPU demand, a PodGroup's shared claim, and preemption that cannot free
claimed devices (v1.35-v1.37).

Upstream: `dynamic-resource-allocation/structured/internal/experimental/allocator_experimental.go`
(counters, taints, capacity), `pkg/scheduler/framework/plugins/dynamicresources` (the filter's
"cannot allocate all claims", "resourceclaim not available on the node"; no
PreFilterExtensions, so a victim's claim stays allocated in preemption's simulation), KEP-4815
(partitionable devices), KEP-5729 (a PodGroup's shared claim).
"""

from __future__ import annotations

import pytest

from tests.scheduler.dra_fixtures import (
    GPU_CLASS,
    MIG_CLASS,
    claim,
    exactly,
    gpu,
    mig_slice,
    resource_slice,
    template,
)
from tests.scheduler.scenario import dra_preemption, job, lowest_index, node, replay_rows

PROFILE = 'device.attributes["gpu.nvidia.com"].profile == "{}"'
MIG_POOL = [
    GPU_CLASS, MIG_CLASS, mig_slice("n1", gpus=2),
    template("mig-1g", {"name": "mig", "exactly": exactly("mig.nvidia.com", selectors=[PROFILE.format("1g.10gb")])}),
    template("mig-3g", {"name": "mig", "exactly": exactly("mig.nvidia.com", selectors=[PROFILE.format("3g.40gb")])}),
    template("whole", {"name": "gpu", "exactly": exactly("gpu.nvidia.com")}),
]


def _timeline(rows, events=("started", "finished", "pending", "preempted")):
    return [(r["time_s"], r["event"], r["workload_id"], r["pod_index"], r["node"], r["gpus"],
             r["message"] if r["event"] == "pending" else None)
            for r in rows if r["event"] in events]


def test_a_mig_pool_serves_slices_and_whole_gpus_without_overlap(tmp_path):
    """Slices go to the first GPU in slice order (gpu-0's MIG devices come first); a whole-GPU
    claim takes gpu-1; a plain count of one GPU is a claim for one whole GPU, so it waits for
    gpu-1 (gpu-0 holds slices until t=300: its counters exclude the whole device). Each pod's
    GPUs are its share: 1g.10gb 0.142 (1 of 7 compute slices), 3g.40gb 0.5 (4 of 8 memory
    slices)."""
    workloads = [
        job("slice-1g", 0, 100, gpus=0.125, resource_claim_templates="mig-1g"),
        job("slice-3g", 0, 300, gpus=0.5, resource_claim_templates="mig-3g"),
        job("whole", 10, 200, gpus=1, resource_claim_templates="whole"),
        job("count", 20, 50, gpus=1),
        job("slice-late", 30, 10, gpus=0.125, resource_claim_templates="mig-1g"),
    ]
    rows = replay_rows(tmp_path, [node("n1", gpus=2, model="H100")], workloads, lowest_index("gang-v1.37"),
                       dra=MIG_POOL)
    assert _timeline(rows) == [
        (0.0, "started", "slice-1g", 0, "n1", 0.142, None),
        (0.0, "started", "slice-3g", 0, "n1", 0.5, None),
        (10.0, "started", "whole", 0, "n1", 1.0, None),
        (20.0, "pending", "count", None, None, None,
         "needs 1 pods x 1 GPUs (any model) = 1 GPUs, 0.358 free in the cluster"),
        (30.0, "started", "slice-late", 0, "n1", 0.142, None),
        (40.0, "finished", "slice-late", 0, "n1", 0.142, None),
        (100.0, "finished", "slice-1g", 0, "n1", 0.142, None),
        (210.0, "finished", "whole", 0, "n1", 1.0, None),
        (210.0, "started", "count", 0, "n1", 1.0, None),
        (260.0, "finished", "count", 0, "n1", 1.0, None),
        (300.0, "finished", "slice-3g", 0, "n1", 0.5, None),
    ]


def test_a_whole_gpu_claim_waits_while_slices_hold_every_gpu(tmp_path):
    """Both GPUs carry a slice: no whole device is free, the filter says so in upstream's words."""
    workloads = [
        job("a", 0, 100, gpus=0.125, resource_claim_templates="mig-3g"),
        job("b", 0, 100, gpus=0.125, resource_claim_templates="mig-3g"),
        job("c", 0, 100, gpus=0.125, resource_claim_templates="mig-3g"),  # gpu-0 has two 3g devices
        job("whole", 5, 10, gpus=1, resource_claim_templates="whole"),
    ]
    rows = replay_rows(tmp_path, [node("n1", gpus=2, model="H100")], workloads, lowest_index("gang-v1.37"),
                       dra=MIG_POOL)
    assert _timeline(rows) == [
        (0.0, "started", "a", 0, "n1", 0.5, None),
        (0.0, "started", "b", 0, "n1", 0.5, None),
        (0.0, "started", "c", 0, "n1", 0.5, None),
        (5.0, "pending", "whole", None, None, None, "0/1 nodes are available: 1 cannot allocate all claims."),
        (100.0, "finished", "a", 0, "n1", 0.5, None),
        (100.0, "finished", "b", 0, "n1", 0.5, None),
        (100.0, "finished", "c", 0, "n1", 0.5, None),
        (100.0, "started", "whole", 0, "n1", 1.0, None),
        (110.0, "finished", "whole", 0, "n1", 1.0, None),
    ]


SHARED = [
    GPU_CLASS,
    resource_slice("n1", [gpu(f"gpu-{i}", index=i) for i in range(2)]),
    resource_slice("n2", [gpu(f"gpu-{i}", index=i) for i in range(2)]),
    claim("group-gpus", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)}),
    template("one", {"name": "gpu", "exactly": exactly("gpu.nvidia.com")}),
]


def test_a_pod_groups_shared_claim_gives_every_pod_the_same_devices(tmp_path):
    """KEP-5729: the group's ResourceClaim is allocated once (two GPUs of n1, by its first
    pod) and every pod uses it, so all pods run on n1 and hold two GPUs between them, not
    two each. A group of per-pod claims (`one`) spreads its pods over free GPUs instead."""
    workloads = [
        job("shared", 0, 100, pods=3, gpus=1, resource_claim="group-gpus"),
        job("per-pod", 0, 100, pods=2, gpus=1, resource_claim_templates="one"),
        job("late", 1, 10, pods=1, gpus=1, resource_claim_templates="one"),
    ]
    rows = replay_rows(tmp_path, [node("n1", gpus=2, model="H100"), node("n2", gpus=2, model="H100")],
                       workloads, lowest_index("gang-v1.37"), dra=SHARED)
    assert _timeline(rows, events=("started", "finished")) == [
        (0.0, "started", "shared", 0, "n1", 2.0, None),
        (0.0, "started", "shared", 1, "n1", 0.0, None),
        (0.0, "started", "shared", 2, "n1", 0.0, None),
        (0.0, "started", "per-pod", 0, "n2", 1.0, None),
        (0.0, "started", "per-pod", 1, "n2", 1.0, None),
        (100.0, "finished", "shared", 0, "n1", 2.0, None),
        (100.0, "finished", "shared", 1, "n1", 0.0, None),
        (100.0, "finished", "shared", 2, "n1", 0.0, None),
        (100.0, "finished", "per-pod", 0, "n2", 1.0, None),
        (100.0, "finished", "per-pod", 1, "n2", 1.0, None),
        (100.0, "started", "late", 0, "n1", 1.0, None),
        (110.0, "finished", "late", 0, "n1", 1.0, None),
    ]


NO_PREEMPTION = [GPU_CLASS, resource_slice("n1", [gpu("gpu-0")]),
                 template("whole", {"name": "gpu", "exactly": exactly("gpu.nvidia.com")})]


@pytest.mark.parametrize(("profile", "urgent_claims", "urgent_starts"), [
    pytest.param("kube-default", "whole", 5000.0, id="a claim-asking preemptor frees no claimed device: it waits"),
    pytest.param(dra_preemption("kube-default"), "whole", 130.0, id="dra_preemption (KEP-5690): low is preempted"),
])
def test_claimed_devices_are_not_preempted(tmp_path, profile, urgent_claims, urgent_starts):
    workloads = [job("low", 0, 5000, gpus=1, priority=1, resource_claim_templates="whole"),
                 job("urgent", 100, 500, gpus=1, priority=9, resource_claim_templates=urgent_claims)]
    rows = replay_rows(tmp_path, [node("n1", gpus=1, model="H100")], workloads, profile, dra=NO_PREEMPTION)
    assert [r["time_s"] for r in rows if r["event"] == "started" and r["workload_id"] == "urgent"] == [urgent_starts]
    assert sum(r["event"] == "preempted" for r in rows) == (0 if urgent_starts == 5000.0 else 1)
