"""Consumable capacity's requestPolicy (KEP-5075): what a request consumes of a shared device
is rounded up into the policy, and an amount the policy does not allow makes the device
unusable for it. Upstream: `staging/src/k8s.io/dynamic-resource-allocation/structured/
internal/experimental/consumable_capacity.go` (`calculateConsumedCapacity`, `roundUpRange`,
`roundUpValidValues`, `violatesPolicy`, `CmpRequestOverCapacity`)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.dra.inputs import read_dra_files
from scheduler.dra.state import DraHolding
from scheduler.errors import InputError
from tests.scheduler.dra_fixtures import GPU_CLASS, exactly, gpu, resource_slice, write_dra
from tests.scheduler.test_dra_allocation import _claims, _state, one

STEP_10 = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
MAX_40 = {"default": "10Gi", "validRange": {"min": "10Gi", "max": "40Gi"}}
VALUES = {"default": "10Gi", "validValues": ["10Gi", "20Gi", "40Gi"]}


def _shares(tmp_path, policy: dict[str, Any], asks: list[str]) -> list[int | None]:
    """The milli-GPUs each claim in turn gets of one shared 80Gi device (None: it does not fit)."""
    shared = gpu("gpu-0", allowMultipleAllocations=True)
    shared["capacity"] = {"memory": {"value": "80Gi", "requestPolicy": policy}}
    templates = [one(f"m{ask}", exactly("gpu.nvidia.com", capacity={"memory": ask})) for ask in sorted(set(asks))]
    state, inputs = _state(tmp_path, [GPU_CLASS, resource_slice("n1", [shared]), *templates], {"n1": 1})
    shares: list[int | None] = []
    for number, ask in enumerate(asks):
        plan = state.plan(0, _claims(inputs, f"w{number}", f"m{ask}"), 0)
        shares.append(plan.parts[0][1] if isinstance(plan, DraHolding) else None)
        if isinstance(plan, DraHolding):
            state.apply(0, plan)
    return shares


@pytest.mark.parametrize(("policy", "asks", "expected"), [
    pytest.param(STEP_10, ["25Gi", "25Gi", "25Gi"], [375, 375, None],
                 id="validRange step 10Gi: 25Gi consumes 30Gi, a third does not fit (90 > 80; 75 would)"),
    pytest.param(STEP_10, ["4Gi"], [125], id="below min: rounded up to min (10 of 80 GiB)"),
    pytest.param(STEP_10, ["30Gi", "30Gi", "20Gi"], [375, 375, 250], id="on the grid: as asked"),
    pytest.param(MAX_40, ["50Gi"], [None], id="above validRange max: the device cannot serve it"),
    pytest.param(MAX_40, ["15Gi"], [187], id="no step: as asked within the range"),
    pytest.param(VALUES, ["15Gi", "15Gi", "15Gi", "15Gi", "15Gi"], [250, 250, 250, 250, None],
                 id="validValues: 15Gi consumes 20Gi, four fill the device"),
    pytest.param(VALUES, ["50Gi"], [None], id="above every valid value: not allowed"),
])
def test_a_request_is_rounded_up_by_the_capacity_request_policy(tmp_path, policy, asks, expected):
    assert _shares(tmp_path, policy, asks) == expected


@pytest.mark.parametrize(("policy", "field"), [
    pytest.param({"validValues": ["10Gi"], "validRange": {"min": "10Gi"}}, "requestPolicy", id="both"),
    pytest.param({"validRange": {"step": "10Gi"}}, "requestPolicy.validRange.min", id="range without min"),
    pytest.param({"validValues": ["20Gi", "10Gi"]}, "requestPolicy.validValues", id="not ascending"),
    pytest.param({"validRange": {"min": "1", "step": "0"}}, "requestPolicy.validRange.step", id="step 0"),
])
def test_a_bad_request_policy_names_its_field(tmp_path, policy, field):
    shared = gpu("gpu-0", allowMultipleAllocations=True)
    shared["capacity"] = {"memory": {"value": "80Gi", "requestPolicy": policy}}
    with pytest.raises(InputError, match=f"field 'spec.devices\\[0\\].capacity.memory.{field}'"):
        read_dra_files([write_dra(tmp_path / "dra.yaml", [resource_slice("n1", [shared])])])


@pytest.mark.parametrize(("count", "expected"), [
    pytest.param(2, ((0, 750),), id="two 30Gi shares of one 80Gi device"),
    pytest.param(3, None, id="a third share does not fit (90 > 80)"),
])
def test_one_request_may_take_several_shares_of_one_device(tmp_path, count, expected):
    """A device with allowMultipleAllocations is never in use (`deviceInUse`: its allocations
    are not in allocatingDevices), so the next device of the same request may be it again."""
    shared = gpu("gpu-0", allowMultipleAllocations=True)
    shared["capacity"] = {"memory": {"value": "80Gi"}}
    objects = [GPU_CLASS, resource_slice("n1", [shared]),
               one("t", exactly("gpu.nvidia.com", count, capacity={"memory": "30Gi"}))]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    plan = state.plan(0, _claims(inputs, "w", "t"), 0)
    assert (plan.parts if isinstance(plan, DraHolding) else None) == expected
