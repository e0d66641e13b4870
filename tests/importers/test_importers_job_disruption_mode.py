"""A batch/v1 Job's and a JobSet's `spec.scheduling.disruptionMode` reach the trace's
`disruption_mode` column (`gpu-finops import kubectl`).

Upstream: a Job's `spec.scheduling` is a `JobSchedulingConfiguration` (KEP-5547, the
WorkloadWithJob gate) embedding `WorkloadPodGroupDisruptionMode` (`k8s.io/api/scheduling`:
a union of `single: {}` and `all: {}`, Single when unset); JobSet compiles its own
`spec.scheduling.disruptionMode` into the PodGroup the same way (jobset's workloadbuilder
integration). One table case per form."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from cluster_dumps import H100, node, pod

from gpu_finops.cli import main

JOBSET = "jobset.x-k8s.io/v1alpha2"


def job_dump(scheduling: dict[str, Any] | None) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"parallelism": 2, "completions": 2, "completionMode": "Indexed"}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    owner = ("Job", "train", "batch/v1")
    return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"}, "spec": spec},
            *[pod(f"train-{i}-x", "ml", created="09:00:00", started="09:00:10", finished="10:00:00",
                  node=f"h100-{i}", owner=owner, annotations={"batch.kubernetes.io/job-completion-index": str(i)})
              for i in range(2)]]


def jobset_dump(scheduling: dict[str, Any] | None) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"replicatedJobs": [{"name": "workers", "replicas": 1}]}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    labels = {"jobset.sigs.k8s.io/jobset-name": "pretrain", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
              "jobset.sigs.k8s.io/job-index": "0"}
    return [{"apiVersion": JOBSET, "kind": "JobSet", "metadata": {"name": "pretrain", "namespace": "ml"}, "spec": spec},
            *[pod(f"pretrain-workers-0-{i}-x", "ml", created="09:00:00", started="09:00:10", finished="10:00:00",
                  node=f"h100-{i}", owner=("Job", "pretrain-workers-0", "batch/v1"),
                  labels={**labels, "batch.kubernetes.io/job-completion-index": str(i)}) for i in range(2)]]


@pytest.mark.parametrize(("case", "items", "workload", "mode"), [
    ("a Job with disruptionMode all", job_dump({"disruptionMode": {"all": {}}}), "ml/job/train", "all"),
    ("a Job with disruptionMode single", job_dump({"disruptionMode": {"single": {}}}), "ml/job/train", ""),
    ("a Job whose scheduling block has no disruptionMode",
     job_dump({"schedulingPolicy": {"gang": {"minCount": 2}}}), "ml/job/train", ""),
    ("a Job without a scheduling block", job_dump(None), "ml/job/train", ""),
    ("a JobSet with disruptionMode all", jobset_dump({"disruptionMode": {"all": {}}}), "ml/jobset/pretrain", "all"),
    ("a JobSet with disruptionMode single", jobset_dump({"disruptionMode": {"single": {}}}), "ml/jobset/pretrain", ""),
    ("a JobSet without a scheduling block", jobset_dump(None), "ml/jobset/pretrain", ""),
])
def test_disruption_mode_of_jobs_and_jobsets(tmp_path: Path, case, items, workload, mode):
    pods, nodes = tmp_path / "pods.json", tmp_path / "nodes.json"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    nodes.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                 "items": [node(f"h100-{i}", H100, 8) for i in range(2)]}))
    assert main(["import", "kubectl", "--pods", str(pods), "--nodes", str(nodes), "--out", str(tmp_path / "out")]) == 0
    with (tmp_path / "out" / "trace.csv").open(newline="", encoding="utf-8") as handle:
        trace = {row["workload_id"]: row for row in csv.DictReader(handle)}
    assert trace[workload]["disruption_mode"] == mode
    with (tmp_path / "out" / "rejected.csv").open(newline="", encoding="utf-8") as handle:
        assert [row for row in csv.DictReader(handle) if row.get("kind") in ("Job", "JobSet")] == []  # read, not refused
