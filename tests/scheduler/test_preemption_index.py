"""The replay's indexes and bounded searches agree with walks over everything.

`_preemption_could_help` (is preemption worth trying for this gang?) reads an index that
`ClusterState` keeps by GPU model and holder priority, and a topology-aware gang's best
domain is found by trying domains best bound first (`_best_domain`) with free GPUs per
domain from running sums; workload-aware preemption puts reprieved groups back on the state
only when a check reads it. With `_CHECK_INDEX` on, every call also walks every holding
workload, sums every domain's nodes, tries every domain and chooses victims putting each
reprieve back at once, and asserts the same answers;
here over a whole demo replay under gang-v1.37 with Kueue, where high-priority inference
preempts training and some gangs prefer one block.
"""

from __future__ import annotations

from gpu_finops.generator import generate
from scheduler import cycle
from scheduler.commands import replay


def test_the_held_gpu_index_matches_a_walk_over_every_holder(tmp_path, monkeypatch):
    calls: dict[str, int] = {}

    def counted(name):
        checked = getattr(cycle, name)

        def call(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return checked(*args, **kwargs)
        return call

    monkeypatch.setattr(cycle, "_CHECK_INDEX", True)
    for name in ("_preemption_could_help", "_best_domain", "_preempt_for_group"):
        monkeypatch.setattr(cycle, name, counted(name))
    files = generate("demo", tmp_path / "in", seed=7)
    replay(files.trace, files.cluster, tmp_path / "run", profile="gang-v1.37", seed=7, queues=files.queues)
    assert calls.get("_preemption_could_help", 0) > 100, "the replay hardly asked: the check proves little"
    assert calls.get("_best_domain", 0) > 100, "few topology-aware plans: the check proves little"
    assert calls.get("_preempt_for_group", 0) > 100, "few workload-aware preemptions: the check proves little"
