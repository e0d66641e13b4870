"""GPUs claimed through DRA are not preempted by kube-scheduler in v1.35-v1.37.

The DRA documentation lists preemption among its limitations, and KEP-5690 (DRA
preemption) targets alpha in v1.38: in preemption's simulation a victim's ResourceClaim
stays allocated, so removing the victim frees no device. gang-v1.37 claims a group's GPUs
through DRA (`group_device_claim`): a high-priority group waits for the GPUs to come free.
`dra_preemption = true` models KEP-5690 for what-ifs. Kueue's preemption evicts workloads
by quota, not by device, and is unaffected.
"""

import pyarrow.parquet as pq
import pytest
import yaml

from scheduler.commands import replay
from scheduler.verify import Verifier
from tests.scheduler.dra_fixtures import GPU_CLASS, gpu, resource_slice
from tests.scheduler.scenario import (
    GANG_V137_PER_POD_CLAIMS,
    NODE_COLUMNS,
    TRACE_COLUMNS,
    _write,
    dra_preemption,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

WORKLOADS = [job("low", 0, 5000, priority=1), job("urgent", 100, 500, priority=9)]


@pytest.mark.parametrize(("profile", "urgent_starts"), [
    pytest.param(lowest_index("gang-v1.37"), 5000.0, id="gang-v1.37 (DRA claims): no preemption, urgent waits"),
    pytest.param(lowest_index(dra_preemption("gang-v1.37")), 130.0, id="dra_preemption (KEP-5690): low is preempted"),
    pytest.param(lowest_index(GANG_V137_PER_POD_CLAIMS), 130.0, id="GPUs as a device plugin's count: preempted"),
    pytest.param("kube-default", 130.0, id="kube-default (no DRA): per-pod preemption"),
])
def test_dra_claimed_gpus_are_not_preempted_before_kep_5690(tmp_path, profile, urgent_starts):
    rows = replay_rows(tmp_path, [node("n1")], WORKLOADS, profile)
    assert [t[0] for t in story(rows, events=("started",)) if t[2] == "urgent"] == [urgent_starts]
    assert sum(r["event"] == "preempted" for r in rows) == (0 if urgent_starts == 5000.0 else 1)


PLAIN_GPU_POOL = [GPU_CLASS, resource_slice("n1", [gpu("gpu-0")])]


@pytest.mark.parametrize(("profile", "nodes", "expected"), [
    pytest.param("kube-default", ["n1"], [(5000.0, "started", "urgent", 0, "n1")],
                 id="a DRA node only: the victim keeps its device, urgent waits for it"),
    pytest.param("kube-default", ["n1", "n2"],
                 [(130.0, "preempted", "low-n2", 0, "n2"), (130.0, "started", "urgent", 0, "n2")],
                 id="a DRA node and a plain one: only the plain node's victim can make room"),
    pytest.param(dra_preemption("kube-default"), ["n1"],
                 [(130.0, "preempted", "low-n1", 0, "n1"), (130.0, "started", "urgent", 0, "n1")],
                 id="dra_preemption (KEP-5690): the device is freed"),
])
def test_a_plain_count_preemptor_cannot_free_a_victims_devices(tmp_path, profile, nodes, expected):
    """A plain GPU count on a DRA node is a claim for a whole GPU (docs/dra.md): in
    preemption's simulation the victim's claim stays allocated (DynamicResources has no
    PreFilterExtensions), whatever the preemptor asks for."""
    workloads = [job(f"low-{name}", 0, 5000, gpus=1, priority=1)
                 for name in nodes]
    workloads.append(job("urgent", 100, 500, gpus=1, priority=9))
    rows = replay_rows(tmp_path, [node(name, gpus=1, model="H100") for name in nodes], workloads,
                       lowest_index(profile), dra=PLAIN_GPU_POOL)
    assert [t[:5] for t in story(rows, events=("started", "preempted")) if t[2] == "urgent" or t[1] == "preempted"] == expected


def test_workload_preemption_takes_its_victims_off_plain_nodes_only(tmp_path):
    """Workload-aware preemption of a plain-count gang (devices per pod, not a group claim): each
    low gang has one pod per node; the pods on the DRA node keep their devices in the
    simulation, so the victims are the pods on the plain node (disruption mode Single: preempted
    alone); `replay --verify` checks the plan against the plain computation."""
    workloads = [job("low-n1", 0, 5000, pods=2, gpus=1, priority=1), job("low-n2", 0, 5000, pods=2, gpus=1, priority=1),
                 job("urgent", 100, 500, pods=2, gpus=1, priority=9)]
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, [node(n, gpus=2, model="H100") for n in ("n1", "n2")])
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, workloads)
    (tmp_path / "profile.toml").write_text(lowest_index(GANG_V137_PER_POD_CLAIMS))
    dra = tmp_path / "dra.yaml"
    dra.write_text(yaml.safe_dump_all([GPU_CLASS, resource_slice("n1", [gpu("gpu-0"), gpu("gpu-1", index=1)])]))
    replay(trace, cluster, tmp_path / "run", profile=str(tmp_path / "profile.toml"), dra=dra, verifier=Verifier())
    rows = pq.read_table(tmp_path / "run" / "events.parquet").to_pylist()
    assert [t[:5] for t in story(rows, events=("started", "preempted")) if t[2] == "urgent" or t[1] == "preempted"] == [
        (130.0, "preempted", "low-n1", 1, "n2"), (130.0, "preempted", "low-n2", 1, "n2"),
        (130.0, "started", "urgent", 0, "n2"), (130.0, "started", "urgent", 1, "n2")]
