"""A group plan that places its pods is committed as made and bound without allocating them
again (`planning.place_group(keep=True)`, `Plan.kept`): the replay writes the log it writes
when every plan is rolled back and its pods are allocated again at bind (the plain way)."""

import pyarrow.parquet as pq
import pytest

from gpu_finops.generator import generate
from scheduler import commands
from scheduler.cycle import planning


@pytest.mark.parametrize("kueue", [False, True])
def test_kept_plans_write_the_log_of_plans_rolled_back_and_allocated_again(tmp_path, monkeypatch, kueue):
    preset = tmp_path / "small.toml"
    preset.write_text('[preset]\nextends = "demo"\nmax_pods = 600\n', encoding="utf-8")
    files = generate(str(preset), tmp_path / "in", seed=42)
    queues = files.queues if kueue else None
    place_group = planning.place_group
    kept: list[int] = []

    def counting(ctx, run, needed, nodes=None, models=None, explain=True, keep=False):
        placed, diagnosis = place_group(ctx, run, needed, nodes, models, explain, keep)
        if keep and len(placed) >= needed:
            kept.append(len(placed))
        return placed, diagnosis

    monkeypatch.setattr(planning, "place_group", counting)
    commands.replay(files.trace, files.cluster, tmp_path / "kept", profile="gang-v1.37", seed=42, queues=queues)
    assert len(kept) > 10 and max(kept) > 1  # single pods and gangs were bound from kept plans

    whole_cluster = planning.whole_cluster

    def rolled_back(ctx, run, needed, explain, keep=False):  # the plain way: never kept
        return whole_cluster(ctx, run, needed, explain, False)

    monkeypatch.setattr(planning, "whole_cluster", rolled_back)
    bound_from_kept = len(kept)
    commands.replay(files.trace, files.cluster, tmp_path / "plain", profile="gang-v1.37", seed=42, queues=queues)
    assert len(kept) == bound_from_kept
    kept_log = pq.read_table(tmp_path / "kept" / "events.parquet")
    plain_log = pq.read_table(tmp_path / "plain" / "events.parquet")
    assert kept_log.num_rows > 1000
    assert kept_log.equals(plain_log)
