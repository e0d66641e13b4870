"""What a command costs before and after its work: parsing one command's arguments imports
only that command's modules, and a replay run as the program leaves its objects to the system
at exit instead of to the collector."""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
from pathlib import Path

from gpu_finops.cli import build_parser, command_named, main

CLUSTER = "node,gpu_model,gpus\nn1,A100,8\nn2,A100,8\n"
TRACE = "workload_id,submit_time,duration_s,pods,gpus_per_pod,gpu_model\nw1,0,60,2,4,A100\nw2,10,60,1,8,A100\n"


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_the_command_word_is_the_first_word_not_an_option():
    assert command_named(["replay", "--trace", "t.csv"]) == "replay"
    assert command_named(["--version"]) is None
    assert command_named([]) is None
    assert command_named(["-h", "sql", "--db", "x"]) == "sql"


def test_every_command_named_gets_its_own_parser_and_an_unknown_word_the_whole_one():
    every = _commands(build_parser())
    assert {"replay", "import", "sweep", "showback", "advise", "experiment"} <= every
    for name in every:
        assert name in _commands(build_parser(name)), name
    assert _commands(build_parser("imprt")) == every
    assert "experiment" not in _commands(build_parser("replay"))


def test_parsing_a_replay_imports_neither_pandas_nor_other_commands_modules():
    probe = ("import sys; from gpu_finops.cli import build_parser; "
             "build_parser('replay').parse_args(['replay', '--trace', 't', '--cluster', 'c', '--out', 'o']); "
             "print(sorted(m for m in ('pandas', 'gpu_finops.importers.commands', 'gpu_finops.experiments.fgd', "
             "'gpu_finops.advise.preemption_command') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


def _inputs(folder: Path) -> None:
    (folder / "cluster.csv").write_text(CLUSTER)
    (folder / "trace.csv").write_text(TRACE)


def test_a_replay_called_from_code_leaves_the_collector_as_it_was(tmp_path):
    _inputs(tmp_path)
    frozen = gc.get_freeze_count()
    assert main(["replay", "-q", "--trace", str(tmp_path / "trace.csv"), "--cluster", str(tmp_path / "cluster.csv"),
                 "--out", str(tmp_path / "run")]) == 0
    assert gc.get_freeze_count() == frozen


def test_the_program_s_replay_freezes_its_objects_after_writing_everything(tmp_path):
    _inputs(tmp_path)
    program = ("import gc, sys; from gpu_finops.cli import main; code = main(); "
               "print(code, gc.get_freeze_count() > 0)")
    done = subprocess.run([sys.executable, "-c", program, "replay", "-q", "--trace", "trace.csv", "--cluster",
                           "cluster.csv", "--out", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.split()[-2:] == ["0", "True"]
    assert (tmp_path / "run" / "events.parquet").stat().st_size > 0
