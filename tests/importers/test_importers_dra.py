"""`import kubectl` on a DRA cluster: ResourceSlices, DeviceClasses and claim templates from the
dump become the replay's `dra.yaml`, each pod's claims are named in the trace, and a node's GPUs
are counted from its slices (a DRA driver's node has no nvidia.com/gpu)."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import yaml

from gpu_finops.importers.kubectl import import_kubectl
from scheduler.commands import replay
from scheduler.dra.inputs import read_dra_files
from tests.importers.dra_dump import _claiming, _namespaced, dra_nodes, dra_pods, write_dra_dumps
from tests.scheduler.dra_fixtures import exactly, template


def _imported(tmp_path):
    dumps = write_dra_dumps(tmp_path / "dumps")
    out = tmp_path / "imported"
    import_kubectl([dumps["pods"]], [dumps["nodes"]], out)
    return out


def test_slices_classes_and_templates_become_the_dra_file(tmp_path):
    out = _imported(tmp_path)
    objects = list(yaml.safe_load_all((out / "dra.yaml").read_text()))
    kinds = [o["kind"] for o in objects]
    assert kinds.count("ResourceSlice") == 2 and kinds.count("DeviceClass") == 2
    assert kinds.count("ResourceClaimTemplate") == 3 and all(o["apiVersion"] == "resource.k8s.io/v1" for o in objects)
    device = next(o for o in objects if o["kind"] == "ResourceSlice")["spec"]["devices"][1]
    assert device["attributes"]["profile"] == {"string": "1g.10gb"}  # the NVIDIA driver's attribute names


def test_pods_name_their_claims_and_nodes_count_the_gpus_their_slices_publish(tmp_path):
    out = _imported(tmp_path)
    trace = {r["workload_id"]: r for r in csv.DictReader((out / "trace.csv").open())}
    assert trace["team-a/notebook-0"]["resource_claim_templates"] == "team-a/mig-1g"
    assert trace["team-a/notebook-0"]["gpus_per_pod"] == "0"  # the containers ask no nvidia.com/gpu
    train = next(r for r in trace.values() if r["workload_id"].endswith("train"))
    assert (train["pods"], train["resource_claim_templates"], train["gpus_per_pod"]) == ("2", "team-b/whole", "0")
    assert trace["team-b/serve"]["resource_claim_templates"] == ""  # the device-plugin way: a count
    cluster = {r["node"]: r for r in csv.DictReader((out / "cluster.csv").open())}
    assert {n: (r["gpus"], r["gpu_model"]) for n, r in cluster.items()} == {
        "dra-0": ("2", "NVIDIA H100 80GB HBM3"), "dra-1": ("2", "NVIDIA H100 80GB HBM3")}


def test_the_import_replays_with_its_dra_file(tmp_path):
    out = _imported(tmp_path)
    result = replay(out / "trace.csv", out / "cluster.csv", tmp_path / "run", profile="gang-v1.37",
                    dra=out / "dra.yaml")
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    started = sorted((e["workload_id"], e["gpus"]) for e in events if e["event"] == "started")
    assert ("team-a/notebook-0", 0.142) in started and ("team-a/finetune", 0.5) in started
    assert ("team-b/serve", 1.0) in started
    assert not [e for e in events if e["event"] == "rejected"]


def test_claim_constraints_config_and_admin_access_pass_through_the_import(tmp_path):
    """A template asking two whole GPUs of one product on distinct indexes (the NVIDIA DRA
    driver's `productName`, `index`), with the driver's opaque GpuConfig, and a monitoring
    template written the v1beta1 way (`adminAccess` beside `deviceClassName`, moved under
    `exactly`): the import keeps them, the replay reads them, and the monitor's device stays
    its user's (0 GPUs for the monitor)."""
    pair = _namespaced(template("pair", {"name": "gpus", "exactly": exactly("gpu.nvidia.com", 2)}), "team-b")
    pair["spec"]["spec"]["devices"] |= {
        "constraints": [{"matchAttribute": "gpu.nvidia.com/productName", "requests": ["gpus"]},
                        {"distinctAttribute": "gpu.nvidia.com/index"}],
        "config": [{"requests": ["gpus"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": "TimeSlicing"}}}}]}
    monitor = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate",
               "metadata": {"name": "monitor", "namespace": "team-b"},
               "spec": {"spec": {"devices": {"requests": [
                   {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1,
                    "adminAccess": True}]}}}}
    pods = dra_pods()
    pods["items"] += [pair, monitor,
                      _claiming("pair", "team-b", "pair", created="13:09:00", started="13:10:00",
                                finished="13:40:00", node="dra-1"),
                      _claiming("dcgm", "team-b", "monitor", created="13:09:00", started="13:10:00",
                                finished="13:40:00", node="dra-1")]
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "pods.json").write_text(json.dumps(pods))
    (dumps / "nodes.json").write_text(json.dumps(dra_nodes()))
    out = tmp_path / "imported"
    import_kubectl([dumps / "pods.json"], [dumps / "nodes.json"], out)
    inputs = read_dra_files([out / "dra.yaml"])
    constraints = inputs.templates["team-b/pair"].constraints
    assert [(c.attribute, c.requests, c.distinct) for c in constraints] == [
        ("gpu.nvidia.com/productName", ("gpus",), False), ("gpu.nvidia.com/index", (), True)]
    assert inputs.templates["team-b/pair"].has_config
    assert inputs.templates["team-b/monitor"].requests[0].alternatives[0].admin_access
    result = replay(out / "trace.csv", out / "cluster.csv", tmp_path / "run", profile="gang-v1.37",
                    dra=out / "dra.yaml")
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    started = {e["workload_id"]: e["gpus"] for e in events if e["event"] == "started"}
    assert (started["team-b/pair"], started["team-b/dcgm"]) == (2.0, 0.0)
