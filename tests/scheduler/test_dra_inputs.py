"""DRA inputs: Kubernetes YAML in, one line naming file, document and field for what is wrong
or not modelled; the trace's claim columns; a replay without DRA inputs is untouched."""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest

from scheduler.commands import replay
from scheduler.dra.inputs import read_dra_files
from scheduler.errors import InputError
from tests.scheduler.dra_fixtures import (
    GPU_CLASS,
    exactly,
    gpu,
    mig_slice,
    resource_slice,
    template,
    write_dra,
)
from tests.scheduler.scenario import NODE_COLUMNS, TRACE_COLUMNS, _write, job, node


def test_objects_read_in_kubernetes_shape(tmp_path):
    path = write_dra(tmp_path / "dra.yaml", [GPU_CLASS, mig_slice("n1", gpus=1, profiles={"1g.10gb": 2}),
                                             template("t", {"name": "r", "exactly": exactly("gpu.nvidia.com", 2)})])
    inputs = read_dra_files([path])
    assert [d.name for d in inputs.devices["n1"]] == ["gpu-0", "gpu-0-mig-1g.10gb-0", "gpu-0-mig-1g.10gb-1"]
    assert dict(inputs.devices["n1"][1].attributes)["gpu.nvidia.com/profile"] == "1g.10gb"
    assert inputs.templates["t"].requests[0].alternatives[0].count == 2
    assert ("gpu.nvidia.com", "n1", "gpu-0-counter-set") in inputs.counter_sets


@pytest.mark.parametrize(("broken", "message"), [
    pytest.param(lambda s: s["spec"].pop("driver"),
                 "dra.yaml: document 1: field 'spec.driver': ResourceSlice n1-gpu.nvidia.com: missing", id="no driver"),
    pytest.param(lambda s: s["spec"]["devices"][0]["capacity"]["memory"].update(value="lots"),
                 "field 'spec.devices[0].capacity.memory.value'", id="capacity not a quantity"),
    pytest.param(lambda s: s["spec"]["devices"][0].update(taints=[{"key": "k", "effect": "Sometimes"}]),
                 "field 'spec.devices[0].taints[0].effect'", id="unknown taint effect"),
    pytest.param(lambda s: s["spec"].update(allNodes=True),
                 "field 'spec.allNodes': ResourceSlice n1-gpu.nvidia.com: devices shared across nodes are not modelled",
                 id="network-attached devices refused, not dropped"),
])
def test_a_bad_slice_is_one_line_naming_document_and_field(tmp_path, broken, message):
    resource = resource_slice("n1", [gpu("gpu-0")])
    broken(resource)
    with pytest.raises(InputError) as error:
        read_dra_files([write_dra(tmp_path / "dra.yaml", [resource])])
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("request_body", "field"), [
    pytest.param({"name": "r"}, "spec.spec.devices.requests[0]", id="neither exactly nor firstAvailable"),
    pytest.param({"name": "r", "exactly": {"deviceClassName": "g", "count": 0}},
                 "spec.spec.devices.requests[0].exactly.count", id="count 0"),
    pytest.param({"name": "r", "exactly": {"deviceClassName": "g", "allocationMode": "Some"}},
                 "spec.spec.devices.requests[0].exactly.allocationMode", id="unknown allocation mode"),
])
def test_a_bad_claim_template_names_its_field(tmp_path, request_body, field):
    with pytest.raises(InputError, match=re.escape(f"document 1: field '{field}'")):
        read_dra_files([write_dra(tmp_path / "dra.yaml", [template("t", request_body)])])


def _replay(tmp_path, nodes, workloads, dra):
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, nodes)
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, workloads)
    dra_file = write_dra(tmp_path / "dra.yaml", dra) if dra is not None else None
    return replay(trace, cluster, tmp_path / "run", profile="gang-v1.37", dra=dra_file)


def test_a_node_whose_gpus_differ_from_its_slices_is_refused(tmp_path):
    with pytest.raises(InputError, match="cluster.csv: field 'gpus': node n1 has 8 GPUs, but its ResourceSlices publish 1"):
        _replay(tmp_path, [node("n1", gpus=8)], [job("a", 0, 10, gpus=1)], [GPU_CLASS, resource_slice("n1", [gpu("g")])])
    assert not (tmp_path / "run").exists()


def test_a_selector_that_does_not_compile_is_refused_before_the_replay(tmp_path):
    bad = template("t", {"name": "r", "exactly": exactly("gpu.nvidia.com", selectors=["device.driver =="])})
    with pytest.raises(InputError, match="ResourceClaimTemplate t: request r, selector #0: CEL compile error"):
        _replay(tmp_path, [node("n1", gpus=1)], [job("a", 0, 10, gpus=1)], [GPU_CLASS, resource_slice("n1", [gpu("g")]), bad])


def test_a_workload_naming_an_unknown_template_is_a_rejected_row(tmp_path):
    result = _replay(tmp_path, [node("n1", gpus=1)],
                     [job("a", 0, 10, gpus=1, resource_claim_templates="nope"), job("b", 0, 10, gpus=1)],
                     [GPU_CLASS, resource_slice("n1", [gpu("g")])])
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    rejected = [(e["workload_id"], e["reason"], e["message"]) for e in events if e["event"] == "rejected"]
    assert rejected == [("a", "UnknownResourceClaim", "ResourceClaimTemplate nope is not in the DRA inputs")]
    assert "resource_claim_templates" in (result.run_dir / "rejected.csv").read_text()
