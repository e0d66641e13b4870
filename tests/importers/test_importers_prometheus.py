"""`gpu-finops import prometheus` on query_range answers of kube-state-metrics
(prometheus_export.py): pods and nodes from series, the same rules as the kubectl importer."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from prometheus_export import PODS, write_export

from gpu_finops.cli import main


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_series_become_workloads_nodes_and_rejected_rows(tmp_path):
    paths = write_export(tmp_path / "export")
    assert main(["import", "prometheus", "--series", *map(str, paths), "--out", str(tmp_path / "out")]) == 0
    out = tmp_path / "out"
    trace = {r["workload_id"]: r for r in rows(out / "trace.csv")}
    train = trace["ml/jobset/train"]
    # kube_pod_labels' label_jobset_sigs_k8s_io_jobset_name read back: one gang of two workers
    assert (train["pods"], train["min_count"], train["gpus_per_pod"], train["queue"]) == ("2", "2", "8", "ml/main")
    assert (train["submit_time"], train["duration_s"]) == ("600", "7200")  # 08:10; 08:20 → 10:20
    assert trace["ml/solo"]["duration_s"] == "1800"
    assert trace["ml/gone"]["duration_s"] == str(70 * 60)  # its series stop at 09:40: deleted then
    assert trace["ml/serve"]["duration_s"] == str(4 * 3600 - 5 * 60)  # still there at 12:00: cut there
    assert (trace["ml/serve"]["kind"], trace["ml/solo"]["cpu_milli_per_pod"]) == ("inference", "4000")
    pods = {p["pod"]: p for p in rows(out / "pods.csv")}
    assert sorted(pods) == sorted(PODS)
    assert {p: pods[p]["role"] for p in ("waiting", "cpu-only")} == {"waiting": "rejected", "cpu-only": "rejected"}
    reasons = {r["name"]: r["reason"].split(":")[0] for r in rows(out / "rejected.csv")}
    assert reasons == {"waiting": "NeverStarted", "cpu-only": "NoGpuRequest", "cpu-a": "NoGpus",
                       "node_load1": "NotUsed"}
    cluster = {r["node"]: r for r in rows(out / "cluster.csv")}
    assert {n: (r["gpus"], r["pricing_category"]) for n, r in cluster.items()} == {
        "h100-a": ("8", "Standard"), "h100-b": ("8", "Dynamic")}  # gke-spot "true"
    manifest = json.loads((out / "import.json").read_text())
    assert (manifest["source"], manifest["start"], manifest["observed_at"]) == (
        "prometheus", "2026-03-02T08:00:00Z", "2026-03-02T12:00:00Z")


def test_a_prometheus_error_answer_is_one_line(tmp_path, capsys):
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error at char 5"}))
    assert main(["import", "prometheus", "--series", str(path), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert "q.json: answer 1 is a Prometheus error: bad_data: parse error at char 5" in error
    assert error.count("\n") == 1


def test_dcgm_series_give_each_workload_its_gpu_weighted_mean_utilisation(tmp_path):
    """GR_ENGINE_ACTIVE per pod and GPU, GPU_UTIL (percent) only where a GPU has no
    GR_ENGINE_ACTIVE; a workload without series stays unknown; bad samples are rejected rows."""
    from prometheus_export import answer, dcgm_series

    paths = write_export(tmp_path / "export")
    active, util = "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL"
    engine = [dcgm_series(active, "train-workers-0-0", g, 0.5, "08:20", "10:20") for g in range(8)]
    # the second worker's GPUs were scraped half as long: a sample is one GPU over one step
    engine += [dcgm_series(active, "train-workers-0-1", g, 0.2, "08:20", "09:20", node="h100-b") for g in range(8)]
    # serve: three good samples (0.2) and four bad ones
    engine.append(dcgm_series(active, "serve", 0, ["0.2", "NaN", "+Inf", {"v": 1}, "170", "0.2", "0.2"],
                              "08:05", "08:35"))
    engine.append(dcgm_series(active, None, 7, 0.0))  # a GPU no pod held
    engine.append(dcgm_series(active, "someone-else", 6, 0.9))  # a pod the import has no workload for
    device = [dcgm_series(util, "train-workers-0-0", g, 95, "08:20", "10:20") for g in range(8)]  # loses to GR
    device += [dcgm_series(util, "solo", g, 60, "09:00", "09:30") for g in range(2)]  # only GPU_UTIL: 0.6
    (tmp_path / "dcgm.json").write_text(json.dumps([answer(engine), answer(device)]))
    out = tmp_path / "out"
    assert main(["import", "prometheus", "--series", *map(str, paths), str(tmp_path / "dcgm.json"),
                 "--out", str(out), "-q"]) == 0
    utilization = {r["workload_id"]: r["gpu_utilization"] for r in rows(out / "trace.csv")}
    # (8 GPUs × 25 samples × 0.5 + 8 × 13 × 0.2) / (8 × 25 + 8 × 13)
    assert float(utilization["ml/jobset/train"]) == round((200 * 0.5 + 104 * 0.2) / 304, 3)
    assert (utilization["ml/solo"], utilization["ml/serve"]) == ("0.6", "0.2")
    assert utilization["ml/gone"] == ""  # no series: unknown, never 0
    dcgm_rows = [r for r in rows(out / "rejected.csv") if r["source"] == "dcgm.json"]
    reasons = sorted((r["name"], r["field"], r["reason"].split(":")[0]) for r in dcgm_rows)
    assert reasons == [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "pod", "NoPod"), ("serve", "values", "BadSample"),
                       ("someone-else", "pod", "NotUsed")]
    bad = next(r["reason"] for r in dcgm_rows if r["name"] == "serve")
    assert bad.startswith("BadSample: 4 of 7 samples") and "not finite" in bad and "dict" in bad and "0..100" in bad


def test_dcgm_units_are_read_per_series_and_a_series_mixing_them_is_rejected(tmp_path):
    """Percent or fraction from each series' own samples (gpu_finops/importers/dcgm.py): above 1
    somewhere is percent, strictly between 0 and 1 somewhere is a fraction, both is MixedUnits;
    only 0s and 1s takes the unit of the metric's other series in the file."""
    from prometheus_export import answer, dcgm_series

    paths = write_export(tmp_path / "export")
    active, util = "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL"
    # GR_ENGINE_ACTIVE exported in percent: its 1 % samples are 0.01, not 100 %
    engine = [dcgm_series(active, "serve", 0, ["1", "50", "1", "50", "1", "50", "1"], "08:05", "08:35")]
    # one GPU of the gang mixes fractions and percent: rejected, the other seven count
    engine.append(dcgm_series(active, "train-workers-0-0", 0, [0.5, 50] * 12 + [0.5], "08:20", "10:20"))
    engine += [dcgm_series(active, "train-workers-0-0", g, 0.4, "08:20", "10:20") for g in range(1, 8)]
    # GPU_UTIL exported as a fraction: 0.5 is half, not 0.5 %
    device = [dcgm_series(util, "solo", g, 0.5, "09:00", "09:30") for g in range(2)]
    # only 1s: the unit of the file's other GPU_UTIL series (fractions), so fully busy, not 1 %
    device.append(dcgm_series(util, "gone", 0, 1, "08:10", "08:40"))
    (tmp_path / "dcgm.json").write_text(json.dumps([answer(engine), answer(device)]))
    out = tmp_path / "out"
    assert main(["import", "prometheus", "--series", *map(str, paths), str(tmp_path / "dcgm.json"),
                 "--out", str(out), "-q"]) == 0
    utilization = {r["workload_id"]: r["gpu_utilization"] for r in rows(out / "trace.csv")}
    assert float(utilization["ml/serve"]) == round((4 * 0.01 + 3 * 0.5) / 7, 3)
    assert (utilization["ml/solo"], utilization["ml/jobset/train"], utilization["ml/gone"]) == ("0.5", "0.4", "1")
    mixed = [r for r in rows(out / "rejected.csv") if r["reason"].startswith("MixedUnits")]
    assert [(r["name"], r["field"]) for r in mixed] == [("train-workers-0-0", "values")]
    assert mixed[0]["reason"] == ("MixedUnits: DCGM_FI_PROF_GR_ENGINE_ACTIVE has samples in percent (above 1: 50) "
                                  "and as fractions (between 0 and 1: 0.5): this series is left out")


def test_a_series_of_only_0s_and_1s_takes_the_unit_of_its_metrics_other_series_in_the_file(tmp_path):
    """An export in percent (a recording rule * 100): a GPU at a constant 1 % reads as 0.01 because
    the metric's other series in the file are in percent; alone, the documented unit decides."""
    from prometheus_export import answer, dcgm_series

    paths = write_export(tmp_path / "export")
    active = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    percent = [dcgm_series(active, "serve", 0, 40, "08:05", "08:35"), dcgm_series(active, "gone", 0, 1, "08:10", "08:40")]
    alone = [dcgm_series(active, "solo", 0, 1, "09:00", "09:30")]
    (tmp_path / "percent.json").write_text(json.dumps([answer(percent)]))
    (tmp_path / "alone.json").write_text(json.dumps([answer(alone)]))
    out = tmp_path / "out"
    assert main(["import", "prometheus", "--series", *map(str, paths), str(tmp_path / "percent.json"),
                 str(tmp_path / "alone.json"), "--out", str(out), "-q"]) == 0
    utilization = {r["workload_id"]: r["gpu_utilization"] for r in rows(out / "trace.csv")}
    assert (utilization["ml/serve"], utilization["ml/gone"], utilization["ml/solo"]) == ("0.4", "0.01", "1")
