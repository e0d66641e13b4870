"""The cyclic collector during a replay: young collections rare from the first input read to
the last file written (reading builds long-lived objects and no garbage cycles), and the
process's thresholds as they were afterwards."""

import gc

from gpu_finops.generator import generate
from scheduler import commands


def test_a_replay_reads_its_inputs_with_rare_collections_and_puts_the_thresholds_back(tmp_path, monkeypatch):
    preset = tmp_path / "small.toml"
    preset.write_text('[preset]\nextends = "demo"\nmax_pods = 300\n', encoding="utf-8")
    files = generate(str(preset), tmp_path / "in", seed=42)
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    read_and_replay = commands._replay

    def noting_the_threshold(*args, **kwargs):  # where reading the inputs begins
        seen.append(gc.get_threshold())
        return read_and_replay(*args, **kwargs)

    monkeypatch.setattr(commands, "_replay", noting_the_threshold)
    commands.replay(files.trace, files.cluster, tmp_path / "run", profile="gang-v1.37", seed=42)
    assert seen == [(100_000, before[1], before[2])]
    assert gc.get_threshold() == before
