"""Ties among the best nodes: kube-scheduler draws uniformly (selectHost), seeded here.

Upstream: kubernetes `pkg/scheduler/schedule_one.go` `selectHost`: among the nodes of the
highest score one is kept by reservoir sampling, so each is chosen with equal chance.
Workload-aware preemption plans the preemptor once on the cluster without victims
(`podgrouppreemption.go`), so the tie decides the victim: with two emptied equal nodes either
workload may go. The gang profiles ship the lowest-index rule (docs/fidelity.md says why);
`tie_break = "random"` in a profile gives the upstream draw, reproducible per seed.
"""

from __future__ import annotations

from pathlib import Path

import scheduler
from tests.scheduler.scenario import job, node, replay_rows

SCENARIO = [job("old", 0, 9000, priority=10), job("fresh", 600, 9000, priority=10), job("urgent", 1500, 100, priority=1000)]


def _gang_v137(tie_break: str) -> str:
    text = (Path(scheduler.__file__).parent / "profiles" / "gang-v1.37.toml").read_text()
    return text.replace("[behaviour]\n", f'[behaviour]\ntie_break = "{tie_break}"\n', 1).replace(
        'name = "gang-v1.37"', f'name = "gang-v1.37-{tie_break}"', 1)


def _victim(tmp_path: Path, profile: str, seed: int) -> str:
    tmp_path.mkdir()
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], SCENARIO, profile, seed=seed)
    return next(r["workload_id"] for r in rows if r["event"] == "requeued")


def test_with_random_ties_either_workload_on_two_emptied_nodes_may_be_the_victim(tmp_path):
    victims = {_victim(tmp_path / f"s{seed}", _gang_v137("random"), seed) for seed in range(1, 13)}
    assert victims == {"old", "fresh"}


def test_lowest_index_always_evicts_the_workload_on_the_first_node(tmp_path):
    victims = {_victim(tmp_path / f"s{seed}", _gang_v137("lowest_index"), seed) for seed in range(1, 7)}
    assert victims == {"old"}


def test_the_same_seed_gives_the_same_log(tmp_path):
    logs = []
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        replay_rows(tmp_path / run, [node("n1"), node("n2")], SCENARIO, _gang_v137("random"), seed=7)
        logs.append((tmp_path / run / "run" / "events.parquet").read_bytes())
    assert logs[0] == logs[1]
