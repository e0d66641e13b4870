"""Ties among the best nodes: kube-scheduler draws uniformly (selectHost), seeded here.

Upstream: kubernetes `pkg/scheduler/schedule_one.go` `selectHost`: among the nodes of the
highest score one is kept by reservoir sampling, so each is chosen with equal chance.
Workload-aware preemption plans the preemptor once on the cluster without victims
(`podgrouppreemption.go`), so the tie decides the victim: with two emptied equal nodes either
workload may go. Every shipped profile draws (`tie_break = "random"`, the default), by a key
per node hashed from the seed, the attempt and the pod (`scheduler/framework/tie_keys.py`):
reproducible per seed; `tie_break = "lowest_index"` keeps the first node of the cluster file.
"""

from __future__ import annotations

from tests.scheduler.scenario import GANG_V137_PREEMPTING, job, lowest_index, node, replay_rows

SCENARIO = [job("old", 0, 9000, priority=10), job("fresh", 600, 9000, priority=10), job("urgent", 1500, 100, priority=1000)]


def _victim(tmp_path, profile: str, seed: int) -> str:
    tmp_path.mkdir()
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], SCENARIO, profile, seed=seed)
    return next(r["workload_id"] for r in rows if r["event"] == "requeued")


def test_by_default_either_workload_on_two_emptied_nodes_may_be_the_victim(tmp_path):
    victims = {_victim(tmp_path / f"s{seed}", GANG_V137_PREEMPTING, seed) for seed in range(1, 13)}
    assert victims == {"old", "fresh"}


def test_lowest_index_always_evicts_the_workload_on_the_first_node(tmp_path):
    victims = {_victim(tmp_path / f"s{seed}", lowest_index(GANG_V137_PREEMPTING), seed) for seed in range(1, 7)}
    assert victims == {"old"}


def test_the_same_seed_gives_the_same_log(tmp_path):
    logs = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        replay_rows(tmp_path / run, [node("n1"), node("n2")], SCENARIO, GANG_V137_PREEMPTING, seed=7)
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
