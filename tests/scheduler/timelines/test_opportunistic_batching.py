"""OpportunisticBatching (kube-scheduler beta, on since v1.35): the previous pod's sorted nodes
reused as a hint for the next pod of the same signature.

Upstream: kubernetes `pkg/scheduler/framework/runtime/batch.go` (`GetNodeHint`,
`batchStateCompatible`, `refreshHintCandidates`, `StoreScheduleResults`) and `schedule_one.go`
(`findNodesThatFitPod` → `evaluateNominatedNode` with the hint; `schedulePod` stores the heap
of scores after its first `Pop`). Pods are signable only when no plugin refuses
(`SignPod`): PodTopologySpread refuses every pod while default constraints are configured,
which upstream's default configuration does, so the stories below turn them off
(`default_topology_spread = false`, `defaultingType: List`), as the batching docs ask.

kube-default-gpu scores free GPUs (LeastAllocated on nvidia.com/gpu) and breaks ties by the
heap's order; four empty 8-GPU nodes, fewer than 100, so every node is searched and the
start never moves.
"""

from __future__ import annotations

from pathlib import Path

import scheduler
from tests.scheduler.scenario import job, node, replay_rows, story

NODES = [node(f"n{i}") for i in range(1, 5)]


def batching(default_topology_spread: bool = False, gate: bool = True) -> str:
    text = (Path(scheduler.__file__).parent / "profiles" / "kube-default-gpu.toml").read_text()
    flags = (f"default_topology_spread = {str(default_topology_spread).lower()}\n"
             f"opportunistic_batching = {str(gate).lower()}\n")
    return text.replace("[behaviour]\n", f"[behaviour]\n{flags}", 1)


def started(tmp_path: Path, workloads: list[dict[str, object]], profile: str) -> list[tuple[object, ...]]:
    tmp_path.mkdir(exist_ok=True)
    return story(replay_rows(tmp_path, NODES, workloads, profile), events=("started",))


WHOLE_NODES = [job(name, 0, 9000, gpus=8) for name in ("a", "b", "c")]


def test_pods_of_one_signature_take_the_kept_heap_s_next_pops(tmp_path):
    """a searches: all four nodes tie, heap.Init moves nothing, the root n1 is popped; the
    pop swaps n4 to the root, and n4 stays there (its children tie: no swap). b (the next
    cycle, same signature, n1 full) gets the hint n4, which fits: no search. c gets the next
    pop, n3. A fresh search would have given b n2 (the root over n2, n3, n4)."""
    assert started(tmp_path, WHOLE_NODES, batching()) == [
        (0.0, "started", "a", 0, "n1"),
        (0.0, "started", "b", 0, "n4"),
        (0.0, "started", "c", 0, "n3"),
    ]


def test_without_signatures_every_pod_searches_afresh(tmp_path):
    """The same trace with PodTopologySpread's default constraints (upstream's default
    configuration, every shipped profile) or with the feature gate off: each pod's search
    pops the root over the nodes left, n2 then n3."""
    fresh = [(0.0, "started", "a", 0, "n1"), (0.0, "started", "b", 0, "n2"), (0.0, "started", "c", 0, "n3")]
    assert started(tmp_path / "spread", WHOLE_NODES, batching(default_topology_spread=True)) == fresh
    assert started(tmp_path / "gate", WHOLE_NODES, batching(gate=False)) == fresh


def test_the_last_node_still_fitting_is_rescored_and_competes_again(tmp_path):
    """4-GPU pods: after a, n1 still fits b, so it is rescored (half free: it scores lower)
    and put back; the heap rebuilt over [n4, n2, n3, n1] keeps n4 at the root: b takes n4
    (a fresh search: n2), and the pop leaves [n2, n1, n3]. For c, n4 still fits: rescored
    and put back, [n2, n1, n3, n4] is a heap already, and c takes the root n2."""
    pods = [job(name, 0, 9000, gpus=4) for name in ("a", "b", "c")]
    assert started(tmp_path, pods, batching()) == [
        (0.0, "started", "a", 0, "n1"),
        (0.0, "started", "b", 0, "n4"),
        (0.0, "started", "c", 0, "n2"),
    ]


def test_a_different_signature_or_an_older_batch_searches_afresh(tmp_path):
    """Six nodes. b asks 7 GPUs: another signature, a fresh search (root n2). c asks 8 at
    t=1: another signature again; its search pops n3 and keeps [n6, n4, n5]. d asks 8 at
    t=2: the right signature, but the kept heap is a second old (more than 500 ms): a fresh
    search, root n4. e, at t=2 right after d, gets d's heap's next pop, n6."""
    nodes = [node(f"n{i}") for i in range(1, 7)]
    pods = [job("a", 0, 9000, gpus=8), job("b", 0, 9000, gpus=7), job("c", 1, 9000, gpus=8),
            job("d", 2, 9000, gpus=8), job("e", 2, 9000, gpus=8)]
    assert story(replay_rows(tmp_path, nodes, pods, batching()), events=("started",)) == [
        (0.0, "started", "a", 0, "n1"),
        (0.0, "started", "b", 0, "n2"),
        (1.0, "started", "c", 0, "n3"),
        (2.0, "started", "d", 0, "n4"),
        (2.0, "started", "e", 0, "n6"),
    ]
