"""DRA allocation rules, one table per rule, each against upstream's allocator
(`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/
allocator_experimental.go`) and the DynamicResources filter (`pkg/scheduler/framework/
plugins/dynamicresources/dynamicresources.go`).

Each case reads the objects from Kubernetes YAML (the user's form), builds the node's DRA
state, allocates some claims first (what already runs there), then asks for one pod's claims:
the devices it gets, or upstream's reason it gets none.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.dra.allocator import AllocationFailed
from scheduler.dra.inputs import read_dra_files
from scheduler.dra.objects import PodClaims
from scheduler.dra.setup import dra_setup
from scheduler.dra.state import (
    CANNOT_ALLOCATE,
    CLAIM_NOT_AVAILABLE,
    DraHolding,
    DraState,
    device_share,
)
from scheduler.model import Cluster, Node
from tests.scheduler.dra_fixtures import (
    GPU_CLASS,
    MIG_CLASS,
    exactly,
    gpu,
    mig_slice,
    resource_slice,
    template,
    write_dra,
)

H100 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'
A100 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'


def _state(tmp_path, objects: list[dict[str, Any]], gpus: dict[str, int]) -> tuple[DraState, Any]:
    inputs = read_dra_files([write_dra(tmp_path / "dra.yaml", objects)])
    cluster = Cluster(tuple(Node(name, "H100", count) for name, count in gpus.items()))
    return dra_setup(inputs, cluster, tmp_path / "dra.yaml", tmp_path / "cluster.csv"), inputs


def _claims(inputs, group: str, *templates: str, shared: str | None = None) -> PodClaims:
    return PodClaims(group, tuple(inputs.templates[t] for t in templates),
                     inputs.claims[shared] if shared else None)


def _take(state: DraState, node: int, claims: PodClaims | None, milli: int = 0) -> DraHolding:
    plan = state.plan(node, claims, milli)
    assert isinstance(plan, DraHolding), plan
    state.apply(node, plan)
    return plan


def _names(state: DraState, node: int, plan: DraHolding | str) -> list[str] | str:
    if isinstance(plan, str):
        return plan
    devices = state.nodes[node]
    assert devices is not None
    return [devices.devices[p.device].name for p in plan.picks]


def one(name: str, request: dict[str, Any]) -> dict[str, Any]:
    return template(name, {"name": "r", "exactly": request})


# -- CEL selectors ---------------------------------------------------------------------

@pytest.mark.parametrize(("selector", "expected"), [
    pytest.param(H100, ["gpu-0"], id="productName matches"),
    pytest.param(A100, CANNOT_ALLOCATE, id="productName mismatch: cannot allocate all claims"),
    pytest.param('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0', ["gpu-0"],
                 id="capacity quantity compareTo"),
    pytest.param('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("80Gi"))', CANNOT_ALLOCATE,
                 id="capacity isGreaterThan, false"),
    pytest.param('device.attributes["gpu.nvidia.com"].index == 1', ["gpu-1"], id="int attribute picks the second"),
    pytest.param('"profile" in device.attributes["gpu.nvidia.com"]', CANNOT_ALLOCATE, id="attribute absent, guarded"),
    pytest.param('device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.0.0"))',
                 ["gpu-0"], id="version attribute as semver, greater"),
    pytest.param('device.attributes["gpu.nvidia.com"].cudaComputeCapability.isLessThan(semver("9.0.0"))',
                 CANNOT_ALLOCATE, id="version attribute as semver, not less than itself"),
    pytest.param('device.attributes["gpu.nvidia.com"].cudaComputeCapability.major() == 9', ["gpu-0"],
                 id="semver major"),
])
def test_cel_selectors_over_attributes_and_capacity(tmp_path, selector, expected):
    objects = [GPU_CLASS, resource_slice("n1", [gpu("gpu-0"), gpu("gpu-1", index=1)]),
               one("t", exactly("gpu.nvidia.com", selectors=[selector]))]
    state, inputs = _state(tmp_path, objects, {"n1": 2})
    assert _names(state, 0, state.plan(0, _claims(inputs, "w", "t"), 0)) == expected


def test_a_selector_error_at_run_time_is_an_error_not_a_mismatch(tmp_path):
    """Upstream returns `claim ...: selector #0: CEL runtime error` (the pod is not scheduled);
    reading a missing attribute without `in` is such an error."""
    objects = [GPU_CLASS, resource_slice("n1", [gpu("gpu-0")]),
               one("t", exactly("gpu.nvidia.com", selectors=['device.attributes["gpu.nvidia.com"].profile == "x"']))]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    with pytest.raises(AllocationFailed, match="CEL runtime error"):
        state.plan(0, _claims(inputs, "w", "t"), 0)


def test_a_class_that_does_not_exist_is_upstreams_error(tmp_path):
    objects = [resource_slice("n1", [gpu("gpu-0")]), one("t", exactly("missing.example.com"))]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    with pytest.raises(AllocationFailed, match="request r: device class missing.example.com does not exist"):
        state.plan(0, _claims(inputs, "w", "t"), 0)


# -- firstAvailable --------------------------------------------------------------------

FIRST_AVAILABLE = template("prefer-h100", {"name": "gpus", "firstAvailable": [
    {"name": "one-h100", **exactly("gpu.nvidia.com", 1, selectors=[H100])},
    {"name": "two-a100", **exactly("gpu.nvidia.com", 2, selectors=[A100])},
]})


@pytest.mark.parametrize(("taken_first", "expected", "chosen"), [
    pytest.param(0, ["gpu-0"], "gpus/one-h100", id="the first alternative when it fits"),
    pytest.param(1, ["a-0", "a-1"], "gpus/two-a100", id="the second when the H100 is taken"),
    pytest.param(2, CANNOT_ALLOCATE, None, id="none fits: cannot allocate all claims"),
])
def test_first_available_takes_the_first_alternative_that_fits(tmp_path, taken_first, expected, chosen):
    a100 = "NVIDIA A100-SXM4-80GB"
    objects = [GPU_CLASS, FIRST_AVAILABLE, one("any", exactly("gpu.nvidia.com")),
               one("a100", exactly("gpu.nvidia.com", selectors=[A100])),
               resource_slice("n1", [gpu("gpu-0"), gpu("a-0", a100, index=1), gpu("a-1", a100, index=2)])]
    state, inputs = _state(tmp_path, objects, {"n1": 3})
    if taken_first >= 1:
        _take(state, 0, _claims(inputs, "h", "any"))  # gpu-0: the H100
    if taken_first >= 2:
        _take(state, 0, _claims(inputs, "a", "a100"))  # one A100: two are no longer free
    plan = state.plan(0, _claims(inputs, "w", "prefer-h100"), 0)
    assert _names(state, 0, plan) == expected
    if chosen:
        assert isinstance(plan, DraHolding) and {p.request for p in plan.picks} == {chosen}


# -- allocation modes ------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "count", "busy", "expected"), [
    pytest.param("ExactCount", 2, 0, ["gpu-0", "gpu-1"], id="ExactCount 2: the first two in slice order"),
    pytest.param("ExactCount", 2, 1, ["gpu-1", "gpu-2"], id="ExactCount 2 with gpu-0 taken: the next two"),
    pytest.param("ExactCount", 4, 0, CANNOT_ALLOCATE, id="ExactCount above the node's devices"),
    pytest.param("All", 0, 0, ["gpu-0", "gpu-1", "gpu-2"], id="All: every matching device"),
    pytest.param("All", 0, 1, CANNOT_ALLOCATE, id="All with one matching device taken: nothing"),
])
def test_allocation_modes(tmp_path, mode, count, busy, expected):
    objects = [GPU_CLASS, one("t", exactly("gpu.nvidia.com", count, mode=mode)),
               one("single", exactly("gpu.nvidia.com")),
               resource_slice("n1", [gpu(f"gpu-{i}", index=i) for i in range(3)])]
    state, inputs = _state(tmp_path, objects, {"n1": 3})
    if busy:
        _take(state, 0, _claims(inputs, "other", "single"))
    assert _names(state, 0, state.plan(0, _claims(inputs, "w", "t"), 0)) == expected


def test_all_with_no_matching_device_fails(tmp_path):
    """'At least one device is required for 'All' allocation mode.' (allocateOne)."""
    objects = [GPU_CLASS, one("t", exactly("gpu.nvidia.com", mode="All", selectors=[A100])),
               resource_slice("n1", [gpu("gpu-0")])]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    assert state.plan(0, _claims(inputs, "w", "t"), 0) == CANNOT_ALLOCATE


# -- partitionable devices: shared counters --------------------------------------------

def _mig_state(tmp_path):
    profile = 'device.attributes["gpu.nvidia.com"].profile == "{}"'
    objects = [GPU_CLASS, MIG_CLASS, mig_slice("n1", gpus=1),
               one("whole", exactly("gpu.nvidia.com")),
               one("1g", exactly("mig.nvidia.com", selectors=[profile.format("1g.10gb")])),
               one("3g", exactly("mig.nvidia.com", selectors=[profile.format("3g.40gb")]))]
    return _state(tmp_path, objects, {"n1": 1})


@pytest.mark.parametrize(("first", "then", "fits"), [
    pytest.param("1g", "whole", False, id="a 1g.10gb slice excludes the whole GPU"),
    pytest.param("whole", "1g", False, id="the whole GPU excludes every slice"),
    pytest.param("3g", "3g", True, id="two 3g.40gb slices share one GPU (4+4 of 8 memory slices)"),
    pytest.param("1g", "3g", True, id="1g and 3g together"),
])
def test_shared_counters_make_slices_and_the_whole_gpu_exclude_each_other(tmp_path, first, then, fits):
    state, inputs = _mig_state(tmp_path)
    _take(state, 0, _claims(inputs, "a", first))
    plan = state.plan(0, _claims(inputs, "b", then), 0)
    assert isinstance(plan, DraHolding) is fits, plan


def test_counters_run_out_after_two_3g_slices_and_one_1g(tmp_path):
    """8 memory slices: 3g + 3g take 8, so no 1g fits; 7 compute slices: 3+3+1 would fit."""
    state, inputs = _mig_state(tmp_path)
    _take(state, 0, _claims(inputs, "a", "3g"))
    _take(state, 0, _claims(inputs, "b", "3g"))
    assert state.plan(0, _claims(inputs, "c", "1g"), 0) == CANNOT_ALLOCATE


def test_a_slice_is_priced_as_its_largest_counter_share(tmp_path):
    """1g.10gb: 1 of 8 memory slices, 1 of 7 compute slices: 142 milli-GPUs; 3g.40gb: 4 of 8
    and 3 of 7: 500; the whole device: 1000."""
    state, inputs = _mig_state(tmp_path)
    devices = state.nodes[0]
    assert devices is not None
    shares = {name: _take(state, 0, _claims(inputs, name, name)).parts for name in ("1g", "3g")}
    assert shares == {"1g": ((0, 142),), "3g": ((0, 500),)}
    whole = [i for i, d in enumerate(devices.devices) if d.name == "gpu-0"][0]
    from scheduler.dra.allocator import Pick
    assert device_share(devices, Pick(0, "r", whole)) == 1000


def test_a_plain_gpu_count_on_a_partitioned_node_takes_whole_gpus_only(tmp_path):
    """A count of 1 is a claim for one whole unit; once a slice is out, none is whole."""
    state, inputs = _mig_state(tmp_path)
    assert _names(state, 0, state.plan(0, None, 1000)) == ["gpu-0"]
    _take(state, 0, _claims(inputs, "a", "1g"))
    assert state.plan(0, None, 1000) == CANNOT_ALLOCATE


# -- consumable capacity ---------------------------------------------------------------

def _shared_gpu_state(tmp_path):
    shared = gpu("gpu-0", allowMultipleAllocations=True)
    shared["capacity"] = {"memory": {"value": "80Gi", "requestPolicy": {"default": "10Gi"}}}
    objects = [GPU_CLASS, resource_slice("n1", [shared]),
               one("m30", exactly("gpu.nvidia.com", capacity={"memory": "30Gi"})),
               one("default", exactly("gpu.nvidia.com"))]
    return _state(tmp_path, objects, {"n1": 1})


@pytest.mark.parametrize(("asks", "fits"), [
    pytest.param(["m30", "m30"], [True, True], id="two 30Gi claims on one 80Gi device"),
    pytest.param(["m30", "m30", "m30"], [True, True, False], id="a third 30Gi does not fit (90 > 80)"),
    pytest.param(["m30", "m30", "default"], [True, True, True], id="the requestPolicy default (10Gi) still fits"),
])
def test_consumable_capacity_shares_one_device_up_to_its_capacity(tmp_path, asks, fits):
    state, inputs = _shared_gpu_state(tmp_path)
    answers = []
    for number, name in enumerate(asks):
        plan = state.plan(0, _claims(inputs, f"w{number}", name), 0)
        answers.append(isinstance(plan, DraHolding))
        if isinstance(plan, DraHolding):
            state.apply(0, plan)
    assert answers == fits


def test_a_capacity_share_is_priced_as_its_fraction_of_the_device(tmp_path):
    state, inputs = _shared_gpu_state(tmp_path)
    assert _take(state, 0, _claims(inputs, "w", "m30")).parts == ((0, 375),)  # 30 of 80 GiB


# -- device taints ---------------------------------------------------------------------

@pytest.mark.parametrize(("effect", "tolerations", "fits"), [
    pytest.param("NoSchedule", None, False, id="NoSchedule, not tolerated"),
    pytest.param("NoExecute", None, False, id="NoExecute, not tolerated"),
    pytest.param("None", None, True, id="effect None never prevents allocation"),
    pytest.param("NoSchedule", [{"key": "maintenance", "operator": "Exists"}], True, id="tolerated by key (Exists)"),
    pytest.param("NoExecute", [{"key": "maintenance", "operator": "Equal", "value": "xid-79",
                                "effect": "NoExecute"}], True, id="tolerated by key, value and effect"),
    pytest.param("NoExecute", [{"key": "maintenance", "operator": "Equal", "value": "other"}], False,
                 id="another value is not tolerated"),
])
def test_device_taints_and_tolerations(tmp_path, effect, tolerations, fits):
    taint = {"key": "maintenance", "value": "xid-79", "effect": effect}
    objects = [GPU_CLASS, resource_slice("n1", [gpu("gpu-0", taints=[taint])]),
               one("t", exactly("gpu.nvidia.com", tolerations=tolerations))]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    assert isinstance(state.plan(0, _claims(inputs, "w", "t"), 0), DraHolding) is fits


# -- a PodGroup's shared claim ---------------------------------------------------------

def test_a_shared_claim_is_allocated_once_and_held_until_its_last_pod_lets_go(tmp_path):
    from tests.scheduler.dra_fixtures import claim

    objects = [GPU_CLASS, claim("group-gpus", {"name": "r", "exactly": exactly("gpu.nvidia.com", 2)}),
               resource_slice("n1", [gpu(f"gpu-{i}", index=i) for i in range(2)]),
               resource_slice("n2", [gpu(f"gpu-{i}", index=i) for i in range(2)])]
    state, inputs = _state(tmp_path, objects, {"n1": 2, "n2": 2})
    claims = _claims(inputs, "g", shared="group-gpus")
    first = _take(state, 0, claims)
    devices = state.nodes[0]
    assert devices is not None
    assert [devices.devices[p.device].name for p in first.shared_picks] == ["gpu-0", "gpu-1"]
    assert first.allocated_shared and first.picks == ()
    assert state.plan(1, claims, 0) == CLAIM_NOT_AVAILABLE  # the same devices: not on another node
    second = _take(state, 0, claims)
    assert second.picks == () and not second.allocated_shared  # the same devices, not two more
    state.unapply(0, first)
    assert "group-gpus" in state.shared and devices.used == {0, 1}  # still held by the second pod: still allocated
    state.unapply(0, second)
    assert "group-gpus" not in state.shared and not state.nodes[0].used
