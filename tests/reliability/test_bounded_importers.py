"""The importers never crash on input, and keep the cluster's own calendar (issue 24).

Through the command line (`gpu-finops import kubectl | prometheus | kueue`): a value past every
bound (quantities ``1e9999999``, ``NaN``, ``1e400``, 5,000 digits; times at year 1 or 9999;
affinity ``values: 5``; Prometheus ``+Inf``, all-NaN and object samples) is a rejected row
with its field and reason, or one line naming the file; a YAML alias bomb is one line within a
fraction of a second in every YAML reader (importers, ``replay --queues``, ``advise quotas``);
a pod created in 1970 is an outlier, said in one line, and the replay the import prints runs
every other workload. Each case tracebacked, hung or moved the start on the code before."""

from __future__ import annotations

import csv
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import hostile
from tests.reliability.processes import assert_one_line_error, in_process

sys.path.insert(0, str(Path(__file__).parents[1] / "importers"))
from cluster_dumps import nodes_list, pod, pods_list, write_dumps  # noqa: E402
from prometheus_export import answer, at, series, write_export  # noqa: E402


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def probe_pod(**changes: Any) -> dict[str, Any]:
    """A finished one-GPU pod, then ``changes`` applied to it (see the cases below)."""
    made = pod("probe", "team-x", created="09:00:00", gpus=changes.pop("gpus", 1), started="09:01:00",
               finished="10:00:00", phase="Succeeded", node="h100-0")
    for path, value in changes.items():
        target = made
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        target[last] = value
    return made


AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": 5}]}]}}}

KUBECTL_CASES = {
    # case: (changes to the probe pod, the rejected row's field ends with, its reason holds)
    "gpus 1e9999999": ({"gpus": "1e9999999"}, "nvidia.com/gpu", "not a quantity"),
    "gpus NaN": ({"gpus": "NaN"}, "nvidia.com/gpu", "not a quantity"),
    "gpus 1e400": ({"gpus": "1e400"}, "nvidia.com/gpu", "more than 9,223,372,036,854,775,807 units"),
    "gpus of 5,000 digits": ({"gpus": "9" * 5000}, "nvidia.com/gpu", "more than 9,223,372,036,854,775,807"),
    "memory of 5,000 digits": ({"spec.containers.0.resources.requests.memory": "9" * 5000}, "memory", "more than"),
    "cpu 1e9999999": ({"spec.containers.0.resources.requests.cpu": "1e9999999"}, "cpu", "not a quantity"),
    "gpus 2^40": ({"gpus": str(2**40)}, "spec.containers", "at most 2,147,483,647"),
    "created at year 1": ({"metadata.creationTimestamp": "0001-01-01T00:00:00Z"}, "creationTimestamp",
                          "OutsideCalendar: '0001-01-01T00:00:00Z' is outside the years 1970-2199"),
    "created at year 9999": ({"metadata.creationTimestamp": "9999-12-31T23:59:59Z"}, "creationTimestamp",
                             "outside the years 1970-2199"),
    "started at year 1": ({"status.startTime": "0001-01-01T00:00:00+14:00"}, "status.startTime",
                          "outside the years"),
    "affinity values: 5": ({"spec.affinity": AFFINITY}, "matchExpressions[0].values", "must be a list, got int 5"),
    "containerStatuses: 5": ({"status.containerStatuses": 5}, "status.containerStatuses", "must be a list"),
    "restartCount of 40 digits": ({"status.containerStatuses": [{"name": "main", "restartCount": 10**40, "state": {
        "terminated": {"startedAt": "2026-03-02T09:01:00Z", "finishedAt": "2026-03-02T10:00:00Z"}}}]},
        "restartCount", "must be 0..2,147,483,647"),
    "priority of 30 digits": ({"spec.priority": 10**30}, "spec.priority", "32-bit"),
}


@pytest.mark.parametrize("case", KUBECTL_CASES, ids=list(KUBECTL_CASES))
def test_a_kubectl_value_past_every_bound_is_a_rejected_row_with_its_reason(tmp_path, case):
    changes, field, reason = KUBECTL_CASES[case]
    dumps = write_dumps(tmp_path / "dumps")
    listed = pods_list()
    listed["items"].append(probe_pod(**changes))
    dumps["pods"].write_text(json.dumps(listed))
    out = tmp_path / "out"
    code, _, err = in_process("import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                              "--out", str(out))
    assert code == 0 and "Traceback" not in err, err
    found = [r for r in rows(out / "rejected.csv") if r["name"] == "probe"]
    assert len(found) == 1 and found[0]["field"].endswith(field) and reason in found[0]["reason"], found
    assert [p["role"] for p in rows(out / "pods.csv") if p["pod"] == "probe"] == ["rejected"]
    assert "probe" not in (out / "trace.csv").read_text()


def test_an_integer_python_cannot_read_is_one_line_naming_the_file(tmp_path):
    dumps = write_dumps(tmp_path / "dumps")
    text = json.dumps(pods_list())
    dumps["pods"].write_text(text.replace('"priority": 0', '"priority": ' + "9" * 5000, 1))
    code, _, err = in_process("import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                              "--out", str(tmp_path / "out"))
    assert "pods.json" in assert_one_line_error("import kubectl", code, err) and "4,300 digits" in err
    yaml_dump = tmp_path / "pods.yaml"
    yaml_dump.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: 2026-03-02T09:00:00Z}\n"
                         f"spec: {{priority: {'9' * 5000}}}\n")
    code, _, err = in_process("import", "kubectl", "--pods", str(yaml_dump), "--nodes", str(dumps["nodes"]),
                              "--out", str(tmp_path / "out"))
    assert "pods.yaml" in assert_one_line_error("import kubectl", code, err)
    assert not (tmp_path / "out").exists()


def test_a_kueue_priority_class_past_32_bits_is_a_rejected_row(tmp_path):
    kueue = tmp_path / "kueue.yaml"
    kueue.write_text("apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: huge}\n"
                     f"value: {10**40}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                     "metadata: {name: default}\n")
    code, _, err = in_process("import", "kueue", "--kueue", str(kueue), "--out", str(tmp_path / "out"))
    assert code == 0 and "Traceback" not in err, err
    found = [r for r in rows(tmp_path / "out" / "queues-rejected.csv") if r["name"] == "huge"]
    assert len(found) == 1 and "32-bit" in found[0]["reason"]


# --------------------------------------------------------------------------- Prometheus


def _bad_series() -> dict[str, dict[str, Any]]:
    labels = {"namespace": "ml", "pod": "solo", "uid": "uid-solo"}
    infinite = series("kube_pod_created", labels, at("08:55"))
    infinite["values"][3][1] = "+Inf"
    all_nan = series("kube_pod_start_time", labels, at("09:00"))
    all_nan["values"] = [[moment, "NaN"] for moment, _ in all_nan["values"]]
    an_object = series("kube_pod_info", labels, 1)
    an_object["values"][0] = {"time": at("08:00"), "value": "1"}
    huge = series("kube_pod_container_resource_requests", {**labels, "resource": "nvidia_com_gpu"}, 1)
    huge["values"][-1][1] = "1e400"  # a float overflows to infinity
    far = series("kube_pod_completion_time", labels, 1)
    far["values"][0][1] = str(253402300799.0)  # 9999-12-31T23:59:59Z as a Unix time
    year_one = series("kube_pod_labels", {"namespace": "ml", "pod": "other", "uid": "uid-other"}, 1)
    year_one["values"][0][0] = -62135596800.0  # 0001-01-01 as a Unix time
    return {"+Inf": infinite, "all NaN": all_nan, "an object": an_object, "1e400": huge, "year 9999": far,
            "year 1": year_one}


def test_bad_prometheus_samples_are_rejected_series_and_the_rest_is_imported(tmp_path):
    paths = write_export(tmp_path / "export")
    bad = tmp_path / "export" / "bad.json"
    cases = _bad_series()
    bad.write_text(json.dumps(answer(list(cases.values()))))
    out = tmp_path / "out"
    code, stdout, err = in_process("import", "prometheus", "--series", *map(str, paths), str(bad), "--out", str(out))
    assert code == 0 and "Traceback" not in err, err
    rejected = {int(r["row"]): r for r in rows(out / "rejected.csv") if r["source"] == "bad.json"}
    reasons = {case: rejected[number]["reason"] for number, case in enumerate(cases, start=1)}
    assert reasons["+Inf"].startswith("BadSample: the value '+Inf' is not finite")
    assert reasons["all NaN"].startswith("Empty:")
    assert reasons["an object"].startswith("BadSample: not [time, \"value\"]")
    assert reasons["1e400"].startswith("BadSample: the value '1e400' is not finite")
    assert reasons["year 9999"].startswith("OutsideCalendar:") and "1970-2199" in reasons["year 9999"]
    assert reasons["year 1"].startswith("OutsideCalendar:")
    assert {r["workload_id"] for r in rows(out / "trace.csv")} >= {"ml/jobset/train", "ml/solo", "ml/serve"}


def test_an_export_of_only_bad_samples_is_one_line_naming_the_file_and_series(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(answer([_bad_series()["+Inf"]])))
    code, _, err = in_process("import", "prometheus", "--series", str(bad), "--out", str(tmp_path / "out"))
    line = assert_one_line_error("import prometheus", code, err)
    assert "bad.json" in line and "series 1" in line and "not finite" in line
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- YAML alias bombs


def _bomb_readers(tmp_path: Path) -> dict[str, list[str]]:
    dumps = write_dumps(tmp_path / "dumps")
    bomb = hostile.billion_laughs()
    pods_yaml = tmp_path / "pods.yaml"
    pods_yaml.write_text(bomb + "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x, labels: *a8}\n")
    nodes_yaml = tmp_path / "nodes.yaml"
    nodes_yaml.write_text(bomb + "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: *a8}\n")
    kueue_yaml = tmp_path / "kueue.yaml"
    kueue_yaml.write_text(bomb + "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                          "metadata: {name: cq, annotations: *a8}\nspec: {}\n")
    config_map = tmp_path / "configmap.yaml"  # the Kueue Configuration inside a ConfigMap: YAML in YAML
    config_map.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: k}\n"
                          "data:\n  controller_manager_config.yaml: |\n"
                          + "".join(f"    {line}\n" for line in bomb.splitlines())
                          + "    apiVersion: config.kueue.x-k8s.io/v1beta1\n    kind: Configuration\n"
                          "    x: *a8\n")
    trace = tmp_path / "trace.csv"
    trace.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\nw1,0,60,1,1\n")
    (tmp_path / "prices.csv").write_text("gpu_model,list_usd_per_gpu_hour\nA100,2.0\n")
    cluster = tmp_path / "cluster.csv"
    cluster.write_text("node,gpu_model,gpus\nn1,A100,8\n")
    out = str(tmp_path / "out")
    return {
        "import kubectl --pods": ["import", "kubectl", "--pods", str(pods_yaml), "--nodes", str(dumps["nodes"]),
                                  "--out", out],
        "import kubectl --nodes": ["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(nodes_yaml),
                                   "--out", out],
        "import kueue": ["import", "kueue", "--kueue", str(kueue_yaml), "--out", out],
        "replay --queues": ["replay", "--trace", str(trace), "--cluster", str(cluster), "--queues", str(kueue_yaml),
                            "--out", out],
        "advise quotas --queues": ["advise", "quotas", "--trace", str(trace), "--cluster", str(cluster),
                                   "--queues", str(kueue_yaml), "--out", out, "--trials", "1"],
        "import kueue (a ConfigMap)": ["import", "kueue", "--kueue", str(config_map), "--out", out],
    }


READERS = ("import kubectl --pods", "import kubectl --nodes", "import kueue", "replay --queues",
           "advise quotas --queues", "import kueue (a ConfigMap)")


@pytest.mark.parametrize("reader", READERS)
def test_a_yaml_alias_bomb_is_one_line_within_a_second_in_every_yaml_reader(tmp_path, reader):
    argv = _bomb_readers(tmp_path)[reader]
    # Once with a missing file, so that the time below is the reading, not importing the modules.
    in_process(*[str(tmp_path / "missing.yaml") if a.endswith(".yaml") else a for a in argv])
    began = time.monotonic()
    code, _, err = in_process(*argv)
    took = time.monotonic() - began
    if reader == "import kueue (a ConfigMap)":
        # The ConfigMap is not a Kueue Configuration once its text is refused: a rejected row.
        assert code == 0 and "Traceback" not in err, err
        assert [r["reason"].split(":")[0] for r in rows(tmp_path / "out" / "queues-rejected.csv")] == ["NotKueue"]
    else:
        line = assert_one_line_error("replay" if argv[0] == "replay" else " ".join(argv[:2]), code, err)
        assert "alias" in line, line
        assert not (tmp_path / "out").exists()
    assert took < 1.0, f"{took:.2f} s"


# --------------------------------------------------------------------------- calendars


def _import_with(tmp_path: Path, created: str) -> tuple[Path, str]:
    dumps = write_dumps(tmp_path / "dumps")
    listed = pods_list()
    listed["items"].append(probe_pod(**{"metadata.creationTimestamp": created}))
    dumps["pods"].write_text(json.dumps(listed))
    out = tmp_path / "out"
    code, stdout, err = in_process("import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                                   "--out", str(out))
    assert code == 0 and "Traceback" not in err, err
    return out, stdout


def _replay_as_printed(stdout: str, run_dir: Path) -> dict[str, Any]:
    line = next(line for line in stdout.splitlines() if line.startswith("replay it: "))
    argv = shlex.split(line.removeprefix("replay it: gpu-finops "))
    code, _, err = in_process(*[str(run_dir) if a == "RUN_DIR" else a for a in argv])
    assert code == 0, err
    return json.loads((run_dir / "run.json").read_text())["counts"]


def test_a_pod_created_in_1970_is_an_outlier_and_the_printed_replay_runs_every_other_workload(tmp_path):
    out, stdout = _import_with(tmp_path, "1970-01-01T00:00:00Z")
    warnings = [line for line in stdout.splitlines() if line.startswith("warning: 1 pod with times beyond")]
    assert len(warnings) == 1 and "cluster's own calendar" in warnings[0], stdout
    manifest = json.loads((out / "import.json").read_text())
    assert manifest["start"] == "2026-03-02T07:00:00Z"  # the cluster's own calendar, not 1970
    outlier = [r for r in rows(out / "rejected.csv") if r["name"] == "probe"]
    assert len(outlier) == 1 and outlier[0]["reason"].startswith("OutsideCalendar: 1970-01-01T00:00:00Z is beyond")
    run = _replay_as_printed(stdout, tmp_path / "run")
    workloads = len(rows(out / "trace.csv"))
    assert (run["workloads"], run["rejected_rows"]) == (workloads, 0)  # before: 11 of 12 quarantined


@pytest.mark.parametrize("created", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_a_timestamp_at_year_1_or_9999_never_writes_a_start_replay_refuses(tmp_path, created):
    out, stdout = _import_with(tmp_path, created)
    assert json.loads((out / "import.json").read_text())["start"] == "2026-03-02T07:00:00Z"
    run = _replay_as_printed(stdout, tmp_path / "run")
    assert run["rejected_rows"] == 0


def test_nodes_with_a_stray_clock_do_not_move_the_dump_time(tmp_path):
    dumps = write_dumps(tmp_path / "dumps")
    nodes = nodes_list()
    nodes["items"][0]["status"]["conditions"][0]["lastHeartbeatTime"] = "2150-01-01T00:00:00Z"
    dumps["nodes"].write_text(json.dumps(nodes))
    out = tmp_path / "out"
    code, _, err = in_process("import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                              "--out", str(out))
    assert code == 0, err
    assert json.loads((out / "import.json").read_text())["observed_at"] == "2026-03-02T14:00:00Z"

