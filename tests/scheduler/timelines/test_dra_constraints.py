"""A golden timeline of claim constraints (docs/dra.md): two GPUs on one NVLink domain wait,
with two GPUs free, until one domain has two free.

Upstream: `dynamic-resource-allocation/structured/internal/experimental/allocator_experimental.go`
(`matchAttributeConstraint`: every device of the claim's set has the attribute, with the first
device's value), the DynamicResources filter's "cannot allocate all claims".
"""

from __future__ import annotations

import pytest

from tests.scheduler.dra_fixtures import GPU_CLASS, claim, exactly, gpu, resource_slice
from tests.scheduler.scenario import job, lowest_index, node, replay_rows
from tests.scheduler.test_dra_constraints import claim_template

DOMAIN = 'device.attributes["gpu.nvidia.com"].nvlinkDomain == 1'


def _gpu(name: str, domain: int) -> dict:
    device = gpu(name, index=int(name[-1]))
    device["attributes"]["nvlinkDomain"] = {"int": domain}
    return device


NVLINK_POOL = [
    GPU_CLASS,
    resource_slice("n1", [_gpu("gpu-0", 0), _gpu("gpu-1", 0), _gpu("gpu-2", 1), _gpu("gpu-3", 1)]),
    claim_template("one", [{"name": "gpu", "exactly": exactly("gpu.nvidia.com")}]),
    claim_template("one-on-domain-1", [{"name": "gpu", "exactly": exactly("gpu.nvidia.com", selectors=[DOMAIN])}]),
    claim_template("pair", [{"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)}],
                   [{"matchAttribute": "gpu.nvidia.com/nvlinkDomain"}]),
    claim_template("any-two", [{"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)}]),
]


def test_a_pair_on_one_nvlink_domain_waits_for_a_domain_with_two_free_gpus(tmp_path):
    """`a` takes gpu-0 (domain 0), `b` gpu-2 (domain 1): gpu-1 and gpu-3 are free, on two
    domains, so `pair` (matchAttribute nvlinkDomain) cannot be allocated and waits; `a`
    leaving at t=100 frees domain 0 whole, and `pair` takes gpu-0 and gpu-1. Two GPUs without
    the constraint (`any-two`, t=20) take the same two free GPUs at once."""
    workloads = [
        job("a", 0, 100, gpus=0, resource_claim_templates="one"),
        job("b", 0, 300, gpus=0, resource_claim_templates="one-on-domain-1"),
        job("pair", 10, 50, gpus=0, resource_claim_templates="pair"),
        job("any-two", 20, 10, gpus=0, resource_claim_templates="any-two"),
    ]
    rows = replay_rows(tmp_path, [node("n1", gpus=4, model="H100")], workloads, lowest_index("gang-v1.37"),
                       dra=NVLINK_POOL)
    timeline = [(r["time_s"], r["event"], r["workload_id"], r["node"], r["gpus"],
                 r["message"] if r["event"] == "pending" else None)
                for r in rows if r["event"] in ("started", "finished", "pending")]
    assert timeline == [
        (0.0, "started", "a", "n1", 1.0, None),
        (0.0, "started", "b", "n1", 1.0, None),
        (10.0, "pending", "pair", None, None, "0/1 nodes are available: 1 cannot allocate all claims."),
        (20.0, "started", "any-two", "n1", 2.0, None),
        (30.0, "finished", "any-two", "n1", 2.0, None),
        (100.0, "finished", "a", "n1", 1.0, None),
        (100.0, "started", "pair", "n1", 2.0, None),
        (150.0, "finished", "pair", "n1", 2.0, None),
        (300.0, "finished", "b", "n1", 1.0, None),
    ]


@pytest.mark.parametrize("profile", ["kube-default", "kube-default-gpu", "gang-v1.35", "coscheduling", "gang-v1.37"])
def test_every_profile_asks_the_allocator_even_with_whole_gpus_free(tmp_path, profile):
    """A free GPU in the count view is not a device the claim can have: the node search calls
    the DynamicResources filter on every node (no inline fit): with gpu-0 (domain 0) and gpu-3
    (domain 1) free, a pair on one domain waits under every shipped profile until `one` gives
    gpu-2 back."""
    workloads = [job("one", 0, 100, gpus=0, resource_claim_templates="one-on-domain-1"),
                 job("pair", 10, 50, gpus=0, resource_claim_templates="pair")]
    pool = [*NVLINK_POOL[:1], resource_slice("n1", [_gpu("gpu-0", 0), _gpu("gpu-2", 1), _gpu("gpu-3", 1)]),
            *NVLINK_POOL[2:]]
    rows = replay_rows(tmp_path, [node("n1", gpus=3, model="H100")], workloads, profile, dra=pool)
    assert [(r["time_s"], r["event"], r["workload_id"]) for r in rows if r["event"] in ("started", "pending")] == [
        (0.0, "started", "one"), (10.0, "pending", "pair"), (100.0, "started", "pair")]


def test_two_workloads_naming_one_resource_claim_share_its_devices(tmp_path):
    """A ResourceClaim is allocated once, whoever uses it (its ReservedFor lists every pod):
    `second` names the claim `first` allocated, so it runs on the same node with the same
    device, and the device is free again only when both have let go (`whole` waits for that)."""
    objects = [GPU_CLASS, resource_slice("n1", [_gpu("gpu-0", 0)]), resource_slice("n2", [_gpu("gpu-1", 0)]),
               claim("shared", {"name": "gpu", "exactly": exactly("gpu.nvidia.com")}),
               claim_template("one", [{"name": "gpu", "exactly": exactly("gpu.nvidia.com")}])]
    workloads = [job("first", 0, 100, gpus=0, resource_claim="shared"),
                 job("second", 10, 200, gpus=0, resource_claim="shared"),
                 job("whole", 20, 50, pods=2, gpus=0, resource_claim_templates="one")]
    rows = replay_rows(tmp_path, [node("n1", gpus=1, model="H100"), node("n2", gpus=1, model="H100")], workloads,
                       lowest_index("gang-v1.37"), dra=objects)
    assert [(r["time_s"], r["event"], r["workload_id"], r["node"]) for r in rows
            if r["event"] in ("started", "finished")] == [
        (0.0, "started", "first", "n1"),
        (10.0, "started", "second", "n1"),
        (100.0, "finished", "first", "n1"),
        (210.0, "finished", "second", "n1"),
        (210.0, "started", "whole", "n1"),
        (210.0, "started", "whole", "n2"),
        (260.0, "finished", "whole", "n1"),
        (260.0, "finished", "whole", "n2"),
    ]
