"""Which devices each DRA pod took (`device_allocations.parquet`, docs/dra.md): one row per pod
placement × device, joined to its event row by `seq`; a PodGroup's shared claim names the pod
that allocated it and gives every other pod the same devices."""

from __future__ import annotations

import pyarrow.parquet as pq

from tests.scheduler.scenario import job, lowest_index, node, replay_rows
from tests.scheduler.timelines.test_dra_claims import MIG_POOL, SHARED

KEYS = ("workload_id", "pod_index", "node", "device", "profile", "share_milli", "partition", "claim_kind", "claim",
        "request", "allocated_by_pod", "in_pod_gpus")


def _allocations(tmp_path, events):
    table = pq.read_table(tmp_path / "run" / "device_allocations.parquet").to_pylist()
    by_seq = {row["seq"]: row for row in events}
    for row in table:  # each row joins its event row exactly
        event = by_seq[row["seq"]]
        assert (event["event"], event["workload_id"], event["pod_index"], event["node"], event["time_s"]) == (
            row["event"], row["workload_id"], row["pod_index"], row["node"], row["time_s"])
    return [tuple(row[k] for k in KEYS) for row in table]


def test_each_placed_pod_names_its_devices_profile_and_claim(tmp_path):
    workloads = [
        job("slice-1g", 0, 100, gpus=0.125, resource_claim_templates="mig-1g"),
        job("slice-3g", 0, 300, gpus=0.5, resource_claim_templates="mig-3g"),
        job("whole", 10, 200, gpus=1, resource_claim_templates="whole"),
        job("count", 20, 50, gpus=1),
    ]
    events = replay_rows(tmp_path, [node("n1", gpus=2, model="H100")], workloads, lowest_index("gang-v1.37"),
                         dra=MIG_POOL)
    assert _allocations(tmp_path, events) == [
        ("slice-1g", 0, "n1", "gpu-0-mig-1g.10gb-0", "1g.10gb", 142, True, "ResourceClaimTemplate", "mig-1g",
         "mig", 0, True),
        ("slice-3g", 0, "n1", "gpu-0-mig-3g.40gb-0", "3g.40gb", 500, True, "ResourceClaimTemplate", "mig-3g",
         "mig", 0, True),
        ("whole", 0, "n1", "gpu-1", None, 1000, False, "ResourceClaimTemplate", "whole", "gpu", 0, True),
        ("count", 0, "n1", "gpu-1", None, 1000, False, "count", None, "gpus", 0, True),
    ]


def test_a_shared_claim_names_the_pod_that_allocated_it(tmp_path):
    workloads = [job("shared", 0, 100, pods=3, gpus=1, resource_claim="group-gpus")]
    events = replay_rows(tmp_path, [node("n1", gpus=2, model="H100"), node("n2", gpus=2, model="H100")],
                         workloads, lowest_index("gang-v1.37"), dra=SHARED)
    rows = _allocations(tmp_path, events)
    assert [(r[1], r[3], r[7], r[8], r[10], r[11]) for r in rows] == [
        (pod, device, "ResourceClaim", "group-gpus", 0, pod == 0)
        for pod in range(3) for device in ("gpu-0", "gpu-1")
    ]


def test_a_count_only_replay_writes_no_allocations(tmp_path):
    replay_rows(tmp_path, [node("n1", gpus=2, model="H100")], [job("a", 0, 10, gpus=1)], lowest_index("gang-v1.37"))
    assert not (tmp_path / "run" / "device_allocations.parquet").exists()
