"""Kueue counts DRA devices against quota with its KueueDRAIntegration gate (on by default),
through the Configuration's resources.deviceClassMappings, as Kueue master decides it
(`pkg/dra/claims.go` `GetResourceRequestsForResourceClaimTemplates`, `countDevicesPerClass`,
`validateCELSelectorsAgainstDevices`; `pkg/controller/core/workload_controller.go`)."""

from __future__ import annotations

import csv

import pyarrow.parquet as pq
import pytest

from scheduler.commands import replay
from scheduler.errors import InputError
from tests.scheduler.dra_fixtures import (
    GPU_CLASS,
    claim,
    exactly,
    gpu,
    resource_slice,
    template,
    write_dra,
)
from tests.scheduler.scenario import NODE_COLUMNS, TRACE_COLUMNS, _write, job, node

QUEUES = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
{configuration}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{{name: default, resources: [{{name: nvidia.com/gpu, nominalQuota: 2}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: team}}
spec: {{clusterQueue: cq}}
"""
MAPPING = """resources:
  deviceClassMappings:
  - {name: nvidia.com/gpu, deviceClassNames: [gpu.nvidia.com]}"""
GATE_OFF = "featureGates: {KueueDRAIntegration: false}"
H100 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'


def _gpus(count: int, **extra) -> dict:
    return exactly("gpu.nvidia.com", count, **extra)


def _with(spec: dict, **devices) -> dict:
    spec["spec"]["spec"]["devices"].update(devices)
    return spec


# Four H100s on n1, a quota of 2 nvidia.com/gpu; each row's two workloads ask for a claim from the
# named template (or, `claim:NAME`, name a ResourceClaim).
DRA = [GPU_CLASS, resource_slice("n1", [gpu(f"gpu-{i}", index=i) for i in range(4)]),
       template("two", {"name": "gpus", "exactly": _gpus(2)}),
       template("picky", {"name": "gpus", "exactly": _gpus(2, selectors=[H100])}),
       template("scarce", {"name": "gpus", "exactly": _gpus(1, selectors=[H100.replace("H100 80GB HBM3", "A100")])}),
       template("greedy", {"name": "first", "exactly": _gpus(3, selectors=["true"])},
                {"name": "second", "exactly": _gpus(3, selectors=["true"])}),
       template("unreadable", {"name": "gpus", "exactly": _gpus(1, selectors=['device.attributes["gpu.nvidia.com"].nvlink'])}),
       template("monitor", {"name": "gpus", "exactly": _gpus(1) | {"adminAccess": True}}),
       template("monitor-all", {"name": "gpus", "exactly": _gpus(0, mode="All") | {"adminAccess": True}}),
       template("all", {"name": "gpus", "exactly": _gpus(0, mode="All")}),
       template("either", {"name": "gpus", "firstAvailable": [{"name": "two", **_gpus(2)}, {"name": "one", **_gpus(1)}]}),
       _with(template("same-product", {"name": "gpus", "exactly": _gpus(2)}),
             constraints=[{"matchAttribute": "gpu.nvidia.com/productName"}]),
       _with(template("configured", {"name": "gpus", "exactly": _gpus(2)}),
             config=[{"opaque": {"driver": "gpu.nvidia.com", "parameters": {}}}]),
       claim("shared", {"name": "gpus", "exactly": _gpus(1)})]


def _run(tmp_path, configuration: str, claim: str = "two"):
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, [node("n1", gpus=4)])
    asks = {"resource_claim": claim.removeprefix("claim:")} if claim.startswith("claim:") else \
        {"resource_claim_templates": claim}
    rows = [job(name, 0, 100, gpus=0, queue="lq", **asks) for name in ("a", "b")]
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, rows)
    queues = tmp_path / "queues.yaml"
    queues.write_text(QUEUES.format(configuration=configuration))
    result = replay(trace, cluster, tmp_path / "run", profile="gang-v1.37", queues=queues,
                    dra=write_dra(tmp_path / "dra.yaml", DRA))
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    return result, events


COUNTED = 101.0  # 2 devices each against a quota of 2: b is admitted in the requeue batch 1 s after a finishes
FREE = 0.0  # nothing counted: both admitted at once (four devices hold both)


@pytest.mark.parametrize(("configuration", "claim", "decided"), [
    pytest.param(MAPPING, "two", COUNTED, id="gate on by default: exactly.count devices of a mapped class"),
    pytest.param(GATE_OFF, "two", ("resource_claim_templates", "Workload uses DRA resources but the "
                                   "KueueDRAIntegration feature gate is not enabled"), id="gate off: rejected"),
    pytest.param("featureGates: {KueueDRAIntegration: false, KueueDRARejectWorkloadsWhenDRADisabled: false}",
                 "two", FREE, id="gate off, rejection off: claims not read"),
    pytest.param("", "two", ("resource_claim_templates",
                             "DeviceClass gpu.nvidia.com is not mapped in DRA configuration for podset main"),
                 id="unmapped class"),
    pytest.param(MAPPING, "picky", COUNTED, id="CEL selectors matching count devices: counted"),
    pytest.param(MAPPING, "scarce", ("resource_claim_templates", "ResourceClaimTemplate scarce: insufficient matching "
                                     "devices for CEL selector in DeviceClass gpu.nvidia.com: 0 device(s) match in "
                                     "the cluster but 1 requested"), id="CEL selectors matching too few devices"),
    pytest.param(MAPPING, "greedy", ("resource_claim_templates", "ResourceClaimTemplate greedy: insufficient matching "
                                     "devices for CEL selector in DeviceClass gpu.nvidia.com: 1 device(s) match in "
                                     "the cluster but 3 requested"), id="a device matches one request of a template"),
    pytest.param(MAPPING, "unreadable", ("resource_claim_templates", "ResourceClaimTemplate unreadable: CEL "
                                         "evaluation failed for DeviceClass gpu.nvidia.com: "), id="CEL error"),
    pytest.param(MAPPING, "monitor", FREE, id="adminAccess: zero quota"),
    pytest.param("", "monitor", FREE, id="adminAccess: its class is not looked up"),
    pytest.param(MAPPING, "monitor-all", FREE, id="adminAccess with All: zero quota"),
    pytest.param(MAPPING, "all", ("resource_claim_templates", "ResourceClaimTemplate all: AllocationMode 'All' is "
                                  "not supported"), id="All"),
    pytest.param(MAPPING, "either", ("resource_claim_templates", "ResourceClaimTemplate either: FirstAvailable "
                                     "device selection is not supported"), id="firstAvailable"),
    pytest.param(MAPPING, "same-product", COUNTED, id="claim constraints: counted"),
    pytest.param(MAPPING, "configured", COUNTED, id="claim config: counted"),
    pytest.param(MAPPING, "claim:shared", ("resource_claim", "KueueDRAIntegration feature does not support use of "
                                           "resource claims"), id="a named ResourceClaim"),
])
def test_what_kueue_counts_and_refuses(tmp_path, configuration, claim, decided):
    _, events = _run(tmp_path, configuration, claim)
    rejected = [(e["workload_id"], e["reason"], e["message"]) for e in events if e["event"] == "rejected"]
    if isinstance(decided, float):
        assert rejected == []
        assert [e["time_s"] for e in events if e["event"] == "started" and e["workload_id"] == "b"] == [decided]
        return
    _, message = decided
    assert [(w, reason) for w, reason, _ in rejected] == [("a", "InadmissibleResourceClaim"),
                                                          ("b", "InadmissibleResourceClaim")]
    for _, _, text in rejected:  # a CEL error ends in the evaluator's own words
        assert text == message if not message.endswith(": ") else text.startswith(message) and len(text) > len(message)


def test_the_rejected_row_names_the_trace_field(tmp_path):
    result, _ = _run(tmp_path, MAPPING, "claim:shared")
    with (result.run_dir / "rejected.csv").open() as rejected:
        assert {(row["field"], row["reason"].split(":")[0]) for row in csv.DictReader(rejected)} == \
            {("resource_claim", "InadmissibleResourceClaim")}


@pytest.mark.parametrize(("configuration", "error"), [
    pytest.param("featureGates: {DynamicResourceAllocation: true}",
                 "featureGates.DynamicResourceAllocation.*unrecognized feature gate", id="the removed gate"),
    pytest.param(MAPPING.replace("]}", "], sources: [{counter: {driver: gpu.nvidia.com, counterName: memory}}]}"),
                 r"deviceClassMappings\[0\]\.sources.*not modelled", id="counter sources"),
])
def test_configuration_kueue_master_does_not_run_is_an_input_error(tmp_path, configuration, error):
    with pytest.raises(InputError, match=error):
        _run(tmp_path, configuration)


def test_a_mapping_to_a_resource_no_quota_counts_is_warned_about(tmp_path):
    result, events = _run(tmp_path, MAPPING.replace("name: nvidia.com/gpu", "name: example.com/gpu"))
    assert any("example.com/gpu is not a resource the replay's quotas count" in w for w in result.warnings)
    assert sorted(e["workload_id"] for e in events if e["event"] == "started") == ["a", "b"]
