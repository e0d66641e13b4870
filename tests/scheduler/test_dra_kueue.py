"""Kueue counts DRA devices against quota only with its DynamicResourceAllocation gate on,
through the Configuration's resources.deviceClassMappings (kueue `pkg/dra/claims.go`
`GetResourceRequestsForResourceClaimTemplates`, `countDevicesPerClass`)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from scheduler.commands import replay
from tests.scheduler.dra_fixtures import (
    GPU_CLASS,
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
GATE_AND_MAPPING = """featureGates: {DynamicResourceAllocation: true}
resources:
  deviceClassMappings:
  - {name: nvidia.com/gpu, deviceClassNames: [gpu.nvidia.com]}"""
DRA = [GPU_CLASS, resource_slice("n1", [gpu(f"gpu-{i}", index=i) for i in range(4)]),
       template("two", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)}),
       template("picky", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 1, selectors=["true"])}),
       template("monitor", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 1) | {"adminAccess": True}})]
_CONSTRAINED = template("same-product", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)})
_CONSTRAINED["spec"]["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.nvidia.com/productName"}]
_CONFIGURED = template("configured", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)})
_CONFIGURED["spec"]["spec"]["devices"]["config"] = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {}}}]
DRA += [_CONSTRAINED, _CONFIGURED]


def _run(tmp_path, configuration: str, claim: str = "two"):
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, [node("n1", gpus=4)])
    rows = [job(name, 0, 100, gpus=0, queue="lq", resource_claim_templates=claim) for name in ("a", "b")]
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, rows)
    queues = tmp_path / "queues.yaml"
    queues.write_text(QUEUES.format(configuration=configuration))
    result = replay(trace, cluster, tmp_path / "run", profile="gang-v1.37", queues=queues,
                    dra=write_dra(tmp_path / "dra.yaml", DRA))
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    return result, events


@pytest.mark.parametrize(("configuration", "b_starts"), [
    pytest.param("", 0.0, id="gate off: Kueue does not read claims, both admitted (4 devices hold both)"),
    pytest.param(GATE_AND_MAPPING, 101.0, id="gate on, mapped to nvidia.com/gpu: 2 devices each, quota 2: b waits "
                 "(admitted in the requeue batch 1 s after a finishes)"),
])
def test_mapped_devices_count_against_quota_only_with_the_gate_on(tmp_path, configuration, b_starts):
    _, events = _run(tmp_path, configuration)
    assert [e["time_s"] for e in events if e["event"] == "started" and e["workload_id"] == "b"] == [b_starts]


@pytest.mark.parametrize(("configuration", "claim", "message"), [
    pytest.param("featureGates: {DynamicResourceAllocation: true}", "two",
                 "DeviceClass gpu.nvidia.com is not mapped in DRA configuration for podset main", id="unmapped class"),
    pytest.param(GATE_AND_MAPPING, "picky", "ResourceClaimTemplate picky: CEL selectors are not supported",
                 id="selectors Kueue cannot count"),
    pytest.param(GATE_AND_MAPPING, "monitor", "ResourceClaimTemplate monitor: AdminAccess is not supported",
                 id="admin access"),
    pytest.param(GATE_AND_MAPPING, "same-product",
                 "ResourceClaimTemplate same-product: device constraints (MatchAttribute) are not supported",
                 id="claim constraints"),
    pytest.param(GATE_AND_MAPPING, "configured", "ResourceClaimTemplate configured: device config is not supported",
                 id="claim config"),
])
def test_a_template_kueue_cannot_count_makes_the_workload_inadmissible(tmp_path, configuration, claim, message):
    _, events = _run(tmp_path, configuration, claim)
    rejected = {(e["workload_id"], e["reason"], e["message"]) for e in events if e["event"] == "rejected"}
    assert rejected == {(w, "InadmissibleResourceClaim", message) for w in ("a", "b")}


def test_a_mapping_to_a_resource_no_quota_counts_is_warned_about(tmp_path):
    mapping = GATE_AND_MAPPING.replace("name: nvidia.com/gpu", "name: example.com/gpu")
    result, events = _run(tmp_path, mapping)
    assert any("example.com/gpu is not a resource the replay's quotas count" in w for w in result.warnings)
    assert sorted(e["workload_id"] for e in events if e["event"] == "started") == ["a", "b"]
