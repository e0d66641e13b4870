"""Claim constraints and admin access, one table per rule, each against upstream's allocator
(`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/
allocator_experimental.go`: `matchAttributeConstraint`, `distinctAttributeConstraint`,
`lookupAttribute`, `allocateDevice`) and its API validation (`pkg/apis/resource/validation`:
`validateDeviceConstraint`, `validateRequestNameRef`, `validateFullyQualifiedName`).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from scheduler.dra.allocator import AllocationFailed
from scheduler.dra.inputs import read_dra_files
from scheduler.dra.state import CANNOT_ALLOCATE, DraHolding
from scheduler.errors import InputError
from tests.scheduler.dra_fixtures import (
    GPU_CLASS,
    MIG_CLASS,
    exactly,
    gpu,
    mig_slice,
    resource_slice,
    write_dra,
)
from tests.scheduler.test_dra_allocation import _claims, _names, _state, _take

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"
PRODUCT = "gpu.nvidia.com/productName"
DOMAIN = "gpu.nvidia.com/nvlinkDomain"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"


def device(name: str, product: str = H100, **attributes: dict[str, Any]) -> dict[str, Any]:
    """A whole GPU with extra attributes (`{"int": 1}`, `{"string": "x"}`; a qualified name as
    `resource_kubernetes_io__pcieRoot`)."""
    found = gpu(name, product)
    for key, value in attributes.items():
        found["attributes"][key.replace("__", "/").replace("_", ".") if "__" in key else key] = value
    return found


def claim_template(name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None,
                   config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if constraints is not None:
        devices["constraints"] = constraints
    if config is not None:
        devices["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": devices}}}


def _plan(tmp_path, devices: list[dict[str, Any]], *templates: dict[str, Any]) -> list[str] | str:
    state, inputs = _state(tmp_path, [GPU_CLASS, resource_slice("n1", devices), *templates], {"n1": len(devices)})
    names = [t["metadata"]["name"] for t in templates]
    return _names(state, 0, state.plan(0, _claims(inputs, "w", *names), 0))


def _gpus(count: int, mode: str = "ExactCount") -> dict[str, Any]:
    return {"name": "gpus", "exactly": exactly("gpu.nvidia.com", count, mode=mode)}


# -- matchAttribute ----------------------------------------------------------------------

@pytest.mark.parametrize(("devices", "constraint", "expected"), [
    pytest.param([device("gpu-0"), device("gpu-1", A100), device("gpu-2")], {"matchAttribute": PRODUCT},
                 ["gpu-0", "gpu-2"], id="match: the A100 between two H100s is skipped"),
    pytest.param([device("gpu-0"), device("gpu-1", A100), device("gpu-2")], None,
                 ["gpu-0", "gpu-1"], id="without the constraint: the first two"),
    pytest.param([device("gpu-0"), device("gpu-1", A100)], {"matchAttribute": PRODUCT},
                 CANNOT_ALLOCATE, id="mismatch: cannot allocate all claims"),
    pytest.param([device("gpu-0"), device("gpu-1", nvlinkDomain={"int": 1}), device("gpu-2", nvlinkDomain={"int": 1})],
                 {"matchAttribute": DOMAIN}, ["gpu-1", "gpu-2"], id="a device without the attribute never joins"),
    pytest.param([device("gpu-0", nvlinkDomain={"int": 1}), device("gpu-1", nvlinkDomain={"string": "1"})],
                 {"matchAttribute": DOMAIN}, CANNOT_ALLOCATE, id="values compared by type: int 1 is not string 1"),
    pytest.param([device("gpu-0", nvlinkDomain={"int": 0}), device("gpu-1", nvlinkDomain={"int": 1}),
                  device("gpu-2", nvlinkDomain={"int": 1})],
                 {"matchAttribute": DOMAIN}, ["gpu-1", "gpu-2"], id="backtracks past the first device's domain"),
    pytest.param([device("gpu-0", cudaDriverVersion={"version": "12.4.0"}),
                  device("gpu-1", cudaDriverVersion={"version": "12.5.0"}),
                  device("gpu-2", cudaDriverVersion={"version": "12.4.0"})],
                 {"matchAttribute": "gpu.nvidia.com/cudaDriverVersion"}, ["gpu-0", "gpu-2"], id="version values"),
    pytest.param([device("gpu-0"), device("gpu-1")], {"matchAttribute": "other.example.com/productName"},
                 CANNOT_ALLOCATE, id="another domain's name is not the driver's attribute"),
    pytest.param([device("gpu-0", resource_kubernetes_io__pcieRoot={"string": "pci0"}),
                  device("gpu-1", resource_kubernetes_io__pcieRoot={"string": "pci1"}),
                  device("gpu-2", resource_kubernetes_io__pcieRoot={"string": "pci0"})],
                 {"matchAttribute": PCIE_ROOT}, ["gpu-0", "gpu-2"], id="a standard attribute of another domain"),
])
def test_match_attribute(tmp_path, devices, constraint, expected):
    template = claim_template("t", [_gpus(2)], [constraint] if constraint else None)
    assert _plan(tmp_path, devices, template) == expected


def test_a_constraint_scoped_to_some_requests_leaves_the_others_free(tmp_path):
    """Requests a, b, c of one GPU each; a and c on one NVLink domain, b anywhere. gpu-0 (domain
    0) for a leaves no domain-0 device for c: the search backtracks until a takes gpu-1."""
    devices = [device("gpu-0", nvlinkDomain={"int": 0}), device("gpu-1", nvlinkDomain={"int": 1}),
               device("gpu-2", nvlinkDomain={"int": 1})]
    requests = [{"name": n, "exactly": exactly("gpu.nvidia.com")} for n in ("a", "b", "c")]
    scoped = claim_template("t", requests, [{"matchAttribute": DOMAIN, "requests": ["a", "c"]}])
    assert _plan(tmp_path, devices, scoped) == ["gpu-1", "gpu-0", "gpu-2"]
    every = claim_template("t", requests, [{"matchAttribute": DOMAIN}])
    assert _plan(tmp_path, devices, every) == CANNOT_ALLOCATE


@pytest.mark.parametrize(("requests", "expected", "label"), [
    pytest.param(["gpus/two"], ["gpu-0"], "gpus/one", id="scoped to one subrequest: the next alternative"),
    pytest.param(["gpus"], ["gpu-0"], "gpus/one", id="the parent's name covers every subrequest"),
    pytest.param(["gpus/one"], ["gpu-0", "gpu-1"], "gpus/two", id="a constraint on another subrequest"),
])
def test_a_constraint_on_first_available_subrequests(tmp_path, requests, expected, label):
    """Two GPUs of one product first, else one: the H100 and the A100 differ."""
    devices = [device("gpu-0"), device("gpu-1", A100)]
    template = claim_template("t", [{"name": "gpus", "firstAvailable": [
        {"name": "two", **exactly("gpu.nvidia.com", 2)}, {"name": "one", **exactly("gpu.nvidia.com", 1)}]}],
        [{"matchAttribute": PRODUCT, "requests": requests}])
    state, inputs = _state(tmp_path, [GPU_CLASS, resource_slice("n1", devices), template], {"n1": 2})
    plan = state.plan(0, _claims(inputs, "w", "t"), 0)
    assert _names(state, 0, plan) == expected
    assert isinstance(plan, DraHolding) and {p.request for p in plan.picks} == {label}


def test_a_constraint_spans_the_requests_of_its_claim_only(tmp_path):
    """Two claims of one GPU each with matchAttribute: each claim is its own set."""
    devices = [device("gpu-0"), device("gpu-1", A100)]
    one = claim_template("one", [_gpus(1)], [{"matchAttribute": PRODUCT}])
    two = claim_template("two", [_gpus(1)], [{"matchAttribute": PRODUCT}])
    assert _plan(tmp_path, devices, one, two) == ["gpu-0", "gpu-1"]
    both = claim_template("both", [{"name": "a", "exactly": exactly("gpu.nvidia.com")},
                                   {"name": "b", "exactly": exactly("gpu.nvidia.com")}], [{"matchAttribute": PRODUCT}])
    assert _plan(tmp_path, devices, both) == CANNOT_ALLOCATE


def test_all_devices_refused_by_a_constraint_is_upstreams_error(tmp_path):
    """allocateDevice with `must`: "cannot add device ... because a claim constraint would not
    be satisfied" (the pod cannot be scheduled), not a node that merely does not fit."""
    devices = [device("gpu-0"), device("gpu-1", A100)]
    template = claim_template("t", [_gpus(0, mode="All")], [{"matchAttribute": PRODUCT}])
    state, inputs = _state(tmp_path, [GPU_CLASS, resource_slice("n1", devices), template], {"n1": 2})
    with pytest.raises(AllocationFailed, match=re.escape(
            "claim t, request gpus: cannot add device gpu.nvidia.com/n1/gpu-1 because a claim constraint "
            "would not be satisfied")):
        state.plan(0, _claims(inputs, "w", "t"), 0)


def test_all_devices_with_a_constraint_they_meet(tmp_path):
    devices = [device("gpu-0"), device("gpu-1")]
    template = claim_template("t", [_gpus(0, mode="All")], [{"matchAttribute": PRODUCT}])
    assert _plan(tmp_path, devices, template) == ["gpu-0", "gpu-1"]


# -- distinctAttribute ---------------------------------------------------------------------

@pytest.mark.parametrize(("devices", "expected"), [
    pytest.param([device("gpu-0", resource_kubernetes_io__pcieRoot={"string": "pci0"}),
                  device("gpu-1", resource_kubernetes_io__pcieRoot={"string": "pci0"}),
                  device("gpu-2", resource_kubernetes_io__pcieRoot={"string": "pci1"})],
                 ["gpu-0", "gpu-2"], id="distinct: the second device on pci0 is skipped"),
    pytest.param([device("gpu-0", resource_kubernetes_io__pcieRoot={"string": "pci0"}),
                  device("gpu-1", resource_kubernetes_io__pcieRoot={"string": "pci0"})],
                 CANNOT_ALLOCATE, id="duplicates only: cannot allocate all claims"),
    pytest.param([device("gpu-0"), device("gpu-1", resource_kubernetes_io__pcieRoot={"string": "pci0"}),
                  device("gpu-2", resource_kubernetes_io__pcieRoot={"string": "pci1"})],
                 ["gpu-1", "gpu-2"], id="a device without the attribute never joins"),
    pytest.param([device("gpu-0", resource_kubernetes_io__pcieRoot={"int": 0}),
                  device("gpu-1", resource_kubernetes_io__pcieRoot={"string": "0"})],
                 ["gpu-0", "gpu-1"], id="values of different types are distinct"),
])
def test_distinct_attribute(tmp_path, devices, expected):
    template = claim_template("t", [_gpus(2)], [{"distinctAttribute": PCIE_ROOT}])
    assert _plan(tmp_path, devices, template) == expected


# -- validation ------------------------------------------------------------------------------

@pytest.mark.parametrize(("constraints", "field", "message"), [
    pytest.param([{"matchAttribute": PRODUCT, "distinctAttribute": PRODUCT}], "constraints[0]",
                 'exactly one of "matchAttribute" or "distinctAttribute"', id="both"),
    pytest.param([{"requests": ["gpus"]}], "constraints[0]", 'exactly one of', id="neither"),
    pytest.param([{"matchAttribute": "productName"}], "constraints[0].matchAttribute",
                 "must be a fully qualified name", id="not fully qualified"),
    pytest.param([{"distinctAttribute": "Gpu.Nvidia.com/x"}], "constraints[0].distinctAttribute",
                 "DNS subdomain", id="domain not a DNS subdomain"),
    pytest.param([{"matchAttribute": PRODUCT, "requests": ["other"]}], "constraints[0].requests[0]",
                 "must be the name of a request in the claim", id="unknown request"),
    pytest.param([{"matchAttribute": PRODUCT, "requests": ["gpus/x"]}], "constraints[0].requests[0]",
                 "must be the name of a request in the claim", id="subrequest of an exactly request"),
    pytest.param([{"matchAttribute": PRODUCT, "requests": ["gpus", "gpus"]}], "constraints[0].requests[1]",
                 "duplicate value", id="duplicate request"),
])
def test_a_constraint_upstream_would_refuse_is_one_line_naming_its_field(tmp_path, constraints, field, message):
    template = claim_template("t", [_gpus(1)], constraints)
    with pytest.raises(InputError) as error:
        read_dra_files([write_dra(tmp_path / "dra.yaml", [template])])
    text = str(error.value)
    assert f"field 'spec.spec.devices.{field}'" in text and message in text and "\n" not in text


OPAQUE = {"driver": "gpu.nvidia.com", "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                                                     "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}}


def test_claim_config_is_accepted_and_does_not_change_the_allocation(tmp_path):
    """Upstream's allocator copies `config` into the allocation result for the driver; it never
    decides which devices a claim gets."""
    devices = [device("gpu-0"), device("gpu-1")]
    plain = claim_template("t", [_gpus(1)])
    configured = claim_template("t", [_gpus(1)], config=[{"requests": ["gpus"], "opaque": OPAQUE}, {"opaque": OPAQUE}])
    assert _plan(tmp_path, devices, configured) == _plan(tmp_path, devices, plain) == ["gpu-0"]


@pytest.mark.parametrize(("config", "field"), [
    pytest.param([{"requests": ["nope"], "opaque": OPAQUE}], "config[0].requests[0]", id="unknown request"),
    pytest.param([{"requests": ["gpus"]}], "config[0].opaque", id="no opaque configuration"),
    pytest.param([{"opaque": {"parameters": {}}}], "config[0].opaque.driver", id="no driver"),
])
def test_a_bad_claim_config_names_its_field(tmp_path, config, field):
    with pytest.raises(InputError, match=re.escape(f"field 'spec.spec.devices.{field}'")):
        read_dra_files([write_dra(tmp_path / "dra.yaml", [claim_template("t", [_gpus(1)], config=config)])])


# -- admin access ------------------------------------------------------------------------------

def _admin(count: int = 1) -> dict[str, Any]:
    return {"name": "gpus", "exactly": exactly("gpu.nvidia.com", count) | {"adminAccess": True}}


def test_admin_access_takes_a_device_in_use_and_does_not_make_it_in_use(tmp_path):
    """Upstream: an adminAccess request skips the in-use check (`allocateDevice`), and its
    result is not considered allocated (`GatherAllocatedState` skips AdminAccess results): the
    device stays its user's, priced once, for them."""
    objects = [GPU_CLASS, resource_slice("n1", [device("gpu-0")]), claim_template("user", [_gpus(1)]),
               claim_template("monitor", [_admin()])]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    user = _take(state, 0, _claims(inputs, "u", "user"))
    monitor = _take(state, 0, _claims(inputs, "m", "monitor"))
    assert _names(state, 0, monitor) == ["gpu-0"] and monitor.parts == () and monitor.picks[0].admin_access
    assert state.plan(0, _claims(inputs, "u2", "user"), 0) == CANNOT_ALLOCATE  # still the user's
    state.unapply(0, user)
    assert _names(state, 0, state.plan(0, _claims(inputs, "u2", "user"), 0)) == ["gpu-0"]  # the monitor holds nothing


def test_admin_access_cannot_take_one_device_twice_in_its_claim(tmp_path):
    objects = [GPU_CLASS, resource_slice("n1", [device("gpu-0")]), claim_template("monitor", [_admin(2)])]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    assert state.plan(0, _claims(inputs, "m", "monitor"), 0) == CANNOT_ALLOCATE


def test_admin_access_to_a_partitionable_gpu_still_needs_its_counters(tmp_path):
    """Counters are checked for every request (`checkAvailableCounters`), admin access or not:
    a MIG slice in use leaves the whole device's counters short."""
    slice_request = {"name": "mig", "exactly": exactly("mig.nvidia.com", selectors=[
        'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'])}
    objects = [GPU_CLASS, MIG_CLASS, mig_slice("n1"), claim_template("slice", [slice_request]),
               claim_template("monitor", [_admin()])]
    state, inputs = _state(tmp_path, objects, {"n1": 1})
    assert _names(state, 0, state.plan(0, _claims(inputs, "m", "monitor"), 0)) == ["gpu-0"]
    _take(state, 0, _claims(inputs, "s", "slice"))
    assert state.plan(0, _claims(inputs, "m", "monitor"), 0) == CANNOT_ALLOCATE


def test_admin_access_is_not_a_field_of_a_subrequest(tmp_path):
    template = claim_template("t", [{"name": "gpus", "firstAvailable": [
        {"name": "one", **exactly("gpu.nvidia.com"), "adminAccess": True}]}])
    with pytest.raises(InputError, match=re.escape(
            "field 'spec.spec.devices.requests[0].firstAvailable[0].adminAccess': ResourceClaimTemplate t: "
            "is not a field of a firstAvailable subrequest")):
        read_dra_files([write_dra(tmp_path / "dra.yaml", [template])])


# -- the claim limit -----------------------------------------------------------------------------

def _forty(tmp_path, *templates: dict[str, Any]):
    devices = [device(f"gpu-{i}") for i in range(40)]
    return _state(tmp_path, [GPU_CLASS, resource_slice("n1", devices), *templates], {"n1": 40})


@pytest.mark.parametrize(("request_body", "message"), [
    pytest.param(_gpus(33), "claim t: number of requested devices 33 exceeds the claim limit of 32", id="count 33"),
    pytest.param(_gpus(0, mode="All"), "claim t: number of requested devices 40 exceeds the claim limit of 32",
                 id="All of 40 devices"),
])
def test_a_claim_asking_more_than_32_devices_is_upstreams_error(tmp_path, request_body, message):
    """AllocationResultsMaxSize (32): `Allocate` refuses a claim whose fewest devices exceed it."""
    state, inputs = _forty(tmp_path, claim_template("t", [request_body]))
    with pytest.raises(AllocationFailed, match=re.escape(message)):
        state.plan(0, _claims(inputs, "w", "t"), 0)


def test_an_alternative_past_the_claim_limit_gives_way_to_the_next(tmp_path):
    """errAllocationResultMaxSizeExceeded: 33 devices are never tried; the next subrequest is."""
    template = claim_template("t", [{"name": "gpus", "firstAvailable": [
        {"name": "many", **exactly("gpu.nvidia.com", 33)}, {"name": "few", **exactly("gpu.nvidia.com", 2)}]}])
    state, inputs = _forty(tmp_path, template)
    plan = state.plan(0, _claims(inputs, "w", "t"), 0)
    assert isinstance(plan, DraHolding) and [p.request for p in plan.picks] == ["gpus/few", "gpus/few"]
