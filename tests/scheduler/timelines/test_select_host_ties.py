"""Ties among the best nodes: the heap's root, as kube-scheduler v1.35+ pops it.

Upstream: kubernetes `pkg/scheduler/schedule_one.go` (`algorithm.go` on master) `schedulePod`:
`newSortedNodeScores(priorityList).Pop()`, a `container/heap` whose Less is "higher
TotalScore, or equal and higher Randomizer"; `prioritizeNodes` sets a Randomizer only for
nodes an extender scored, so without extenders ties fall by the heap's order over the
feasible nodes in scan order (`scheduler/framework/node_heap.py`). The reservoir draw of
`selectHost` is gone since v1.35; the replay keeps it as an explicit profile option
(`tie_break = "random"`, a seeded key per node, `scheduler/framework/tie_keys.py`), and
`tie_break = "lowest_index"` keeps the first node of the cluster file.
Workload-aware preemption plans the preemptor once on the cluster without victims
(`podgrouppreemption.go`), so the tie rule decides the victim.
"""

from __future__ import annotations

from tests.scheduler.scenario import (
    GANG_V137_PREEMPTING,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

SCENARIO = [job("old", 0, 9000, priority=10), job("fresh", 600, 9000, priority=10), job("urgent", 1500, 100, priority=1000)]


def _with_tie_break(rule: str) -> str:
    return lowest_index(GANG_V137_PREEMPTING).replace('tie_break = "lowest_index"', f'tie_break = "{rule}"')


def _victim(tmp_path, profile: str, seed: int) -> str:
    tmp_path.mkdir()
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], SCENARIO, profile, seed=seed)
    return next(r["workload_id"] for r in rows if r["event"] == "requeued")


def test_by_default_the_heaps_root_decides_the_victim_on_every_seed(tmp_path):
    """Two emptied equal nodes: heap.Init over [n1, n2] leaves n1 at the root (no swap
    between equals), so the workload on n1 goes, whatever the seed."""
    victims = {_victim(tmp_path / f"s{seed}", GANG_V137_PREEMPTING, seed) for seed in range(1, 7)}
    assert victims == {"old"}


def test_the_random_tie_break_draws_either_victim_across_seeds(tmp_path):
    victims = {_victim(tmp_path / f"s{seed}", _with_tie_break("random"), seed) for seed in range(1, 13)}
    assert victims == {"old", "fresh"}


def test_lowest_index_always_evicts_the_workload_on_the_first_node(tmp_path):
    victims = {_victim(tmp_path / f"s{seed}", lowest_index(GANG_V137_PREEMPTING), seed) for seed in range(1, 7)}
    assert victims == {"old"}


def test_a_tied_node_deeper_in_the_heap_climbs_past_the_first_tied_node_scanned(tmp_path):
    """A one-GPU probe: feasible nodes in scan order n1 (2 GPUs used), n2 (4 used), n3 and n4
    (empty); under LeastAllocated n3 and n4 tie. heap.Init sifts n4 (index 3) up under n2 (index 1), then
    the root's left child (n4) beats its right (n3) on the tie: the probe lands on n4, where
    the first tied node of the scan would be n3 and lowest_index gives n3."""
    nodes = [node("n1"), node("n2"), node("n3"), node("n4")]
    workloads = [job("two", 0, 9000, gpus=2), job("four", 1, 9000, gpus=4), job("probe", 10, 100, gpus=1)]
    (tmp_path / "heap").mkdir()
    rows = replay_rows(tmp_path / "heap", nodes, workloads, "gang-v1.37")
    started = story(rows, events=("started",))
    assert started[:2] == [(0.0, "started", "two", 0, "n1"), (1.0, "started", "four", 0, "n2")], started
    assert started[2] == (10.0, "started", "probe", 0, "n4")
    (tmp_path / "low").mkdir()
    rows = replay_rows(tmp_path / "low", nodes, workloads, lowest_index(GANG_V137_PREEMPTING))
    assert [s for s in story(rows, events=("started",)) if s[2] == "probe"] == [(10.0, "started", "probe", 0, "n3")]


def test_the_same_seed_gives_the_same_log(tmp_path):
    logs = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        replay_rows(tmp_path / run, [node("n1"), node("n2")], SCENARIO, _with_tie_break("random"), seed=7)
        logs.append((tmp_path / run / "run" / "events.parquet").read_bytes())
    assert logs[0] == logs[1]


def test_the_keyed_draw_is_uniform_over_the_best_nodes_and_ignores_the_scan_order():
    """The least key of k tied nodes falls on each about 1/k of the time (pods differ by
    their base), and depends only on the set, not the order it is scanned in."""
    from collections import Counter

    from scheduler.framework.tie_keys import TieKeys

    ties = TieKeys(42)
    wins: Counter[int] = Counter()
    for pod in range(4000):
        ties.begin_attempt("w", 0, 0, float(pod))
        base = ties.pod_base(("w", pod))
        nodes = [3, 7, 11, 19]
        first = min(nodes, key=lambda n: ties.key(base, n))
        assert first == min(reversed(nodes), key=lambda n: ties.key(base, n))
        wins[first] += 1
    assert set(wins) == {3, 7, 11, 19} and all(850 < count < 1150 for count in wins.values()), wins


def test_a_levels_keys_as_one_array_are_the_keys_one_by_one():
    """`SaltTable` computes a large level's keys as a uint64 array; its least node, its key
    and its key order are those of the plain big-integer keys, on both sides of the size
    where it switches (`ARRAY_LEVEL`)."""
    import random

    from scheduler.framework.tie_keys import ARRAY_LEVEL, TieKeys

    ties = TieKeys(42)
    table = ties.table(500)
    draw = random.Random(3)
    for size in (2, ARRAY_LEVEL - 1, ARRAY_LEVEL, 40, 500):
        for _ in range(50):
            level = draw.sample(range(500), size)
            base = ties.pod_base((f"w{draw.randrange(10**6)}", draw.randrange(8)))
            plain = sorted(level, key=lambda n: ties.key(base, n))
            assert table.least(base, level) == (ties.key(base, plain[0]), plain[0])
            assert table.in_key_order(base, level) == plain
            assert [int(k) for k in table.keys(base, level)] == [ties.key(base, n) for n in level]
