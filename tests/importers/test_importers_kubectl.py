"""`gpu-finops import kubectl` on realistic dumps (cluster_dumps.py): gangs rebuilt from every
grouping mechanism, nodes mapped from their labels, Kueue objects cleaned into manifests the
replay reads, and every object accounted for."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from cluster_dumps import A100, H100, input_pods, write_dumps

from gpu_finops.cli import main
from scheduler.admission.manifests import read_queue_config


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("import")
    dumps = write_dumps(folder / "dumps")
    assert main(["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                 "--kueue", str(dumps["kueue"]), "--out", str(folder / "out")]) == 0
    return folder / "out"


def test_every_input_pod_is_a_workload_a_member_or_a_rejected_row(imported):
    pods = rows(imported / "pods.csv")
    assert sorted((p["namespace"], p["pod"]) for p in pods) == sorted(input_pods())
    workloads = {r["workload_id"] for r in rows(imported / "trace.csv")}
    rejected = {(r["source"], r["row"]) for r in rows(imported / "rejected.csv")}
    for pod in pods:
        if pod["role"] == "rejected":
            assert (pod["source"], pod["row"]) in rejected, pod
        else:
            assert pod["role"] in ("workload", "member") and pod["workload_id"] in workloads, pod
    counts = json.loads((imported / "import.json").read_text())["counts"]
    assert counts["input_pods"] == len(pods) == 29
    assert (counts["pods_as_workloads"], counts["pods_as_members"], counts["pods_rejected"]) == (2, 22, 5)
    assert counts["gang_and_claim_objects"] == {"PodGroup": 3, "Workload": 1, "CompositePodGroup": 1, "Job": 1,
                                                "ResourceClaimTemplate": 1, "LeaderWorkerSet": 1}


def test_gangs_are_rebuilt_from_every_grouping_mechanism(imported):
    trace = {r["workload_id"]: r for r in rows(imported / "trace.csv")}
    pods = {p["pod"]: p for p in rows(imported / "pods.csv")}

    def shape(workload_id: str) -> tuple:
        r = trace[workload_id]
        return r["pods"], r["min_count"], r["gpus_per_pod"]

    jobset = trace["team-llm/jobset/llm-pretrain"]
    assert shape("team-llm/jobset/llm-pretrain") == ("4", "4", "8")
    # Kueue's queue and WorkloadPriorityClass, the preferred rack (GKE sub-block) of Kueue TAS
    assert (jobset["queue"], jobset["priority"], jobset["topology_preferred"]) == ("team-llm/main", "1000", "rack")
    # created 08:00 (1 h after the start, 07:00); complete at 09:00:05, done at 12:00
    assert (jobset["submit_time"], jobset["duration_s"]) == ("3600", str(3 * 3600 - 5))
    assert shape("team-llm/podgroup/bert") == ("3", "2", "4")  # minMember 2 from the PodGroup object
    # its scheduleTimeoutSeconds (coscheduling's Permit wait, GetWaitTimeDuration); none elsewhere
    assert trace["team-llm/podgroup/bert"]["schedule_timeout_s"] == "60"
    assert trace["team-llm/jobset/llm-pretrain"]["schedule_timeout_s"] == ""
    assert trace["team-llm/podgroup/bert"]["duration_s"] == str(4 * 3600 - 20)  # bert-2's later copy: 13:31
    assert shape("team-llm/podgroup/old-pg") == ("2", "2", "2")  # the older scheduler-plugins label
    # LeaderWorkerSet: leader and worker ask for different GPUs: two workloads started together
    for part, gpus in (("leader", "2"), ("worker", "4")):
        row = trace[f"team-vision/lws/vllm-0/{part}"]
        assert (row["pods"], row["gpus_per_pod"], row["parent_group"], row["parent_min_groups"], row["kind"]) == (
            "1", gpus, "team-vision/lws/vllm-0", "2", "inference")
    assert shape("team-vision/workload/sim/workers") == ("3", "2", "8")  # v1alpha1 workloadRef, minCount 2
    experts, router = trace["team-vision/podgroup/moe-experts"], trace["team-vision/podgroup/moe-router"]
    assert (experts["parent_group"], experts["parent_min_groups"], experts["topology_required"]) == (
        "team-vision/compositepodgroup/moe", "2", "zone")
    assert (router["pods"], router["min_count"], router["parent_group"]) == ("1", "1", experts["parent_group"])
    # Indexed Job: index 1 failed and was recreated: two members, the retry is attempt 2 of member 1
    assert shape("team-vision/job/finetune") == ("2", "2", "1")
    assert (pods["finetune-1-g5h6i"]["member"], pods["finetune-1-g5h6i"]["attempt"]) == ("1", "2")
    assert shape("team-vision/kueue-group/eval") == ("2", "2", "2")
    assert trace["team-vision/kueue-group/eval"]["queue"] == "team-vision/main"
    chat = trace["team-web/chat-7d9f8b6c4-qwz2x"]
    assert (chat["gpu_model"], chat["kind"]) == (A100, "inference")  # its nodeSelector
    assert chat["duration_s"] == str(7 * 3600 - 60)  # still running at the dump (14:00): cut there
    assert trace["team-web/notebook-ana"]["gpus_per_pod"] == "1"  # the DRA claim template's one GPU
    assert pods["llm-pretrain-workers-0-1-x7k2p"]["restarts"] == "2"


def test_disruption_mode_and_pod_loss_policy_come_from_the_objects(imported):
    trace = {r["workload_id"]: r for r in rows(imported / "trace.csv")}

    def said(workload_id: str) -> tuple[str, str]:
        return trace[workload_id]["disruption_mode"], trace[workload_id]["on_pod_loss"]

    # CompositePodGroup moe: disruptionMode {all: {}}, its children's rows carry it
    assert said("team-vision/podgroup/moe-experts") == said("team-vision/podgroup/moe-router") == ("all", "")
    assert said("team-llm/podgroup/bert") == ("", "")  # no disruptionMode: Single, the kind's policy
    assert said("team-llm/jobset/llm-pretrain") == ("", "restart_group")  # JobSet's default failure policy
    assert said("team-vision/job/finetune") == ("", "replace_pod")  # the Job recreates the pod
    # LeaderWorkerSet restartPolicy None: the group's StatefulSet recreates the lost pod
    assert said("team-vision/lws/vllm-0/leader") == said("team-vision/lws/vllm-0/worker") == ("", "replace_pod")


def test_refused_objects_say_why(imported):
    reasons = {r["name"]: (r["field"], r["reason"].split(":")[0]) for r in rows(imported / "rejected.csv")}
    assert reasons["stuck-train"] == ("status.startTime", "NeverStarted")
    assert reasons["just-created"] == ("status.startTime", "NeverStarted")
    assert reasons["coredns-5d78c9869d-abcde"] == ("spec.containers", "NoGpuRequest")
    assert reasons["bad-gpus"] == ("spec.containers[0].resources.limits.nvidia.com/gpu", "Invalid")
    assert reasons["vllm"] == ("kind", "NotAPod")  # the Service
    assert reasons["bert-2"] == ("metadata.uid", "Superseded")  # the earlier copy
    assert reasons["cpu-0"][1] == "NoGpus" and reasons["mystery-gpu"][1] == "MissingGpuProduct"
    assert reasons["jobset-llm-pretrain-5b2c1"] == ("kind", "NotModelled")  # a Kueue Workload
    stuck = next(r for r in rows(imported / "rejected.csv") if r["name"] == "stuck-train")
    assert "0/6 nodes are available" in stuck["reason"]  # the scheduler's own words


def test_nodes_take_model_topology_and_pricing_from_their_labels(imported):
    cluster = {r["node"]: r for r in rows(imported / "cluster.csv")}
    assert sorted(cluster) == ["a100-0", "a100-1", "h100-0", "h100-1", "h100-2", "h100-3"]
    h0 = cluster["h100-0"]
    assert (h0["gpu_model"], h0["gpus"], h0["zone"], h0["block"], h0["rack"]) == (
        H100, "8", "us-central1-a", "block-1", "sb-1")
    assert h0["cpu_milli"] == "207500" and h0["memory_mib"] == str(1830000000 * 1024 // 2**20)
    assert [cluster[n]["pricing_category"] for n in ("h100-0", "h100-1", "h100-3")] == [
        "Committed", "Standard", "Dynamic"]  # Karpenter reserved / none / spot


def test_kueue_objects_become_manifests_the_replay_reads(imported):
    text = (imported / "queues.yaml").read_text()
    documents = [d for d in yaml.safe_load_all(text) if d]
    assert all("status" not in d and "managedFields" not in d["metadata"] for d in documents)
    config = read_queue_config(imported / "queues.yaml")
    assert set(config.cluster_queues) == {"llm", "vision"} and set(config.cohorts) == {"research"}
    assert config.flavors["h100-spot"].labels == {"nvidia.com/gpu.product": H100}  # capacity type dropped
    assert "karpenter.sh/capacity-type=spot dropped" in text
    # Its taint would land on every H100 node once the capacity-type label is gone: dropped too.
    assert config.flavors["h100-spot"].node_taints == () and len(config.flavors["h100-spot"].tolerations) == 1
    assert "ResourceFlavor h100-spot: nodeTaints dropped with those labels" in text
    assert config.priority_classes["high"].value == 1000
    assert not [w for w in config.warnings if "not a known field" in w]


def test_import_options_tenant_label_gpu_label_and_pending_duration(tmp_path):
    dumps = write_dumps(tmp_path / "dumps")
    nodes = json.loads(dumps["nodes"].read_text())
    nodes["items"][-1]["metadata"]["labels"]["cloud.example.com/accelerator"] = "L4"
    dumps["nodes"].write_text(json.dumps(nodes))
    assert main(["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                 "--out", str(tmp_path / "out"), "--gpu-product-label", "cloud.example.com/accelerator",
                 "--pending-duration", "600", "--observed-at", "2026-03-02T15:00:00Z"]) == 0
    cluster = {r["node"]: r["gpu_model"] for r in rows(tmp_path / "out" / "cluster.csv")}
    assert cluster["mystery-gpu"] == "L4"
    trace = {r["workload_id"]: r for r in rows(tmp_path / "out" / "trace.csv")}
    assert trace["team-llm/stuck-train"]["duration_s"] == "600"
    assert trace["team-web/chat-7d9f8b6c4-qwz2x"]["duration_s"] == str(8 * 3600 - 60)  # cut at 15:00 now
    assert not (tmp_path / "out" / "queues.yaml").exists()


def test_yaml_multi_document_dumps_import_the_same(tmp_path, imported):
    dumps = write_dumps(tmp_path / "dumps")
    documents = [json.loads(chunk) for chunk in _json_chunks(dumps["pods"].read_text())]
    yaml_pods = tmp_path / "pods.yaml"
    yaml_pods.write_text("\n---\n".join(yaml.safe_dump(d) for d in documents))
    assert main(["import", "kubectl", "--pods", str(yaml_pods), "--nodes", str(dumps["nodes"]),
                 "--kueue", str(dumps["kueue"]), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "trace.csv").read_text() == (imported / "trace.csv").read_text()


def _json_chunks(text: str) -> list[str]:
    decoder, position, chunks = json.JSONDecoder(), 0, []
    while position < len(text.rstrip()):
        value, end = decoder.raw_decode(text, position)
        chunks.append(text[position:end])
        position = end
        while position < len(text) and text[position].isspace():
            position += 1
    return chunks


@pytest.mark.parametrize(("content", "expected"), [
    ('{"kind": "List", "items": [', "pods.json: not valid JSON: line 1"),
    ("kind: List\nitems: [\n", "pods.json: not valid YAML: line"),
    ("", "pods.json: holds no object"),
    (b"\xff\xfe", "pods.json: not UTF-8"),
])
def test_unreadable_dumps_are_one_line_errors(tmp_path, capsys, content, expected):
    dumps = write_dumps(tmp_path / "dumps")
    path = tmp_path / "pods.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["import", "kubectl", "--pods", str(path), "--nodes", str(dumps["nodes"]),
                 "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and expected in error and "Traceback" not in error
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_no_gpu_node_is_an_error_and_nothing_is_written(tmp_path, capsys):
    dumps = write_dumps(tmp_path / "dumps")
    dumps["nodes"].write_text(json.dumps({"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "cpu"},
                                                                     "status": {"allocatable": {"cpu": "4"}}}]}))
    assert main(["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                 "--out", str(tmp_path / "out")]) == 2
    assert "no GPU node" in capsys.readouterr().err
    assert not (tmp_path / "out" / "trace.csv").exists()
