"""The GPUs-held-below-a-priority index agrees with a walk over every holder.

`_preemption_could_help` (is preemption worth trying for this gang?) reads an index that
`ClusterState` keeps by GPU model and holder priority. With `_CHECK_INDEX` on, every call
also walks every holding workload and asserts the same sum; here over a whole demo replay
under gang-v1.37 with Kueue, where high-priority inference preempts training.
"""

from __future__ import annotations

from scheduler import cycle
from scheduler.commands import replay
from scheduler.generator import generate


def test_the_held_gpu_index_matches_a_walk_over_every_holder(tmp_path, monkeypatch):
    calls = []
    checked = cycle._preemption_could_help

    def counted(*args, **kwargs):
        calls.append(1)
        return checked(*args, **kwargs)

    monkeypatch.setattr(cycle, "_CHECK_INDEX", True)
    monkeypatch.setattr(cycle, "_preemption_could_help", counted)
    files = generate("demo", tmp_path / "in", seed=7)
    replay(files.trace, files.cluster, tmp_path / "run", profile="gang-v1.37", seed=7, queues=files.queues)
    assert len(calls) > 100, "the replay hardly asked: the check proves little"
