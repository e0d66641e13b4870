"""Pre-replay checks: workloads that can never run are quarantined with the numbers."""

from __future__ import annotations

import csv

import pytest

from scheduler.model.cluster import Cluster
from scheduler.trace import check_against_cluster, write_rejected_csv
from scheduler.trace.generic import RejectedRow
from tests.builders import make_cluster, make_nodes, make_workload

CLUSTER = make_cluster(nodes=32, gpus=8, model="A100")  # 256 A100 GPUs


@pytest.mark.parametrize(
    ("workload", "field", "reason"),
    [
        (make_workload(gpu_models=("TPU",)), "gpu_model", "UnknownGpuModel: asks for TPU; the cluster has A100"),
        (
            make_workload(pods=40, gpus_per_pod=8),
            "min_count",
            "LargerThanCluster: needs 40 pods x 8 GPUs of any model = 320 GPUs with min_count 40 (320 GPUs); "
            "cluster has 256 any model GPUs, max 8 per node; only 32 such pods fit",
        ),
        (make_workload(gpus_per_pod=16), "gpus_per_pod", "max 8 per node"),
        (make_workload(pods=40, gpus_per_pod=8, gpu_models=("A100", "TPU")), "min_count", "of A100 = 320 GPUs"),
    ],
)
def test_workloads_that_can_never_run_are_rejected(workload, field, reason):
    accepted, rejected = check_against_cluster([workload], CLUSTER)
    assert accepted == []
    (row,) = rejected
    assert (row.workload_id, row.field, row.row) == (workload.workload_id, field, workload.source_row)
    assert reason in row.reason


@pytest.mark.parametrize(
    "workload",
    [
        make_workload(pods=40, min_count=32, gpus_per_pod=8),  # the quorum fits
        make_workload(pods=1, gpus_per_pod=0.25, gpu_models=("A100", "TPU")),  # one known alternative is enough
        make_workload(pods=512, gpus_per_pod=0.5),  # two shares per device x 256 devices
    ],
)
def test_workloads_that_fit_an_empty_cluster_pass(workload):
    assert check_against_cluster([workload], CLUSTER) == ([workload], [])


def test_model_restriction_counts_only_that_models_nodes():
    cluster = Cluster((*make_nodes(2, 8, "H100", prefix="h"), *make_nodes(8, 8, "A100", prefix="a")))
    _, rejected = check_against_cluster([make_workload(pods=4, gpus_per_pod=8, gpu_models=("H100",))], cluster)
    assert "cluster has 16 H100 GPUs" in rejected[0].reason


def test_fractional_pods_need_a_whole_device_each_slice():
    cluster = make_cluster(nodes=1, gpus=2)
    # 0.4 GPU: two slices per device (0.8), never one pod across two devices
    _, rejected = check_against_cluster([make_workload(pods=5, gpus_per_pod=0.4)], cluster)
    assert "only 4 such pods fit" in rejected[0].reason


def test_rejected_csv_is_written_whole_and_neutralises_formulas(tmp_path):
    path = tmp_path / "rejected.csv"
    write_rejected_csv(
        [RejectedRow(2, "=HYPERLINK(\"x\")", "duration_s", "must be > 0, got -5"), RejectedRow(3, None, "workload_id", "missing")],
        path,
    )
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["row", "workload_id", "field", "reason"]
    assert rows[1] == ["2", "'=HYPERLINK(\"x\")", "duration_s", "must be > 0, got -5"]
    assert rows[2] == ["3", "", "workload_id", "missing"]
    assert [p.name for p in tmp_path.iterdir()] == ["rejected.csv"]  # no temp file left
