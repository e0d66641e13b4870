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


def test_replay_verify_writes_the_same_allocations(tmp_path):
    """`replay --verify` checks the fast paths as it goes; the devices each pod took are the same."""
    import yaml

    from scheduler.commands import replay
    from scheduler.verify import Verifier

    workloads = [job("a", 0, 100, gpus=0.125, resource_claim_templates="mig-1g"),
                 job("b", 5, 50, gpus=0.5, resource_claim_templates="mig-3g"), job("c", 10, 20, gpus=1)]
    replay_rows(tmp_path, [node("n1", gpus=2, model="H100")], workloads, lowest_index("gang-v1.37"), dra=MIG_POOL)
    plain = pq.read_table(tmp_path / "run" / "device_allocations.parquet")
    (tmp_path / "dra.yaml").write_text(yaml.safe_dump_all(MIG_POOL, sort_keys=False))
    replay(tmp_path / "trace.csv", tmp_path / "cluster.csv", tmp_path / "verified", profile=str(tmp_path / "profile.toml"),
           seed=1, dra=tmp_path / "dra.yaml", verifier=Verifier())
    assert pq.read_table(tmp_path / "verified" / "device_allocations.parquet").equals(plain)
    assert plain.num_rows == 3


def test_a_first_available_request_names_the_alternative_it_took(tmp_path):
    """'A 3g.40gb, else a 1g.10gb' on one H100 (8 memory slices): the first gets a 3g.40gb (4);
    after a 1g.10gb pod (1), a second 3g.40gb no longer fits (9 > 8), so the third pod gets the
    1g.10gb alternative, named `request/subrequest` as upstream's results name it."""
    from tests.scheduler.dra_fixtures import GPU_CLASS, MIG_CLASS, exactly, mig_slice, template
    from tests.scheduler.timelines.test_dra_claims import PROFILE

    either = template("3g-else-1g", {"name": "mig", "firstAvailable": [
        {"name": "big", **exactly("mig.nvidia.com", selectors=[PROFILE.format("3g.40gb")])},
        {"name": "small", **exactly("mig.nvidia.com", selectors=[PROFILE.format("1g.10gb")])}]})
    one_g = template("mig-1g", {"name": "mig", "exactly": exactly("mig.nvidia.com", selectors=[PROFILE.format("1g.10gb")])})
    workloads = [job("a", 0, 100, gpus=0.125, resource_claim_templates="3g-else-1g"),
                 job("b", 1, 100, gpus=0.125, resource_claim_templates="mig-1g"),
                 job("c", 2, 100, gpus=0.125, resource_claim_templates="3g-else-1g")]
    events = replay_rows(tmp_path, [node("n1", gpus=1, model="H100")], workloads, lowest_index("gang-v1.37"),
                         dra=[GPU_CLASS, MIG_CLASS, mig_slice("n1", gpus=1), either, one_g])
    assert [(r[0], r[4], r[5], r[9]) for r in _allocations(tmp_path, events)] == [
        ("a", "3g.40gb", 500, "mig/big"), ("b", "1g.10gb", 142, "mig"), ("c", "1g.10gb", 142, "mig/small")]
