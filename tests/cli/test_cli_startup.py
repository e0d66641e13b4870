"""What a command costs around its work: parsing one command's arguments imports only that
command's modules, a replay leaves its objects to the system at exit, not to the collector, a
compiled replay writes its files without importing pandas, and no command starts OpenBLAS threads
that spin for nothing."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from gpu_finops.cli import build_parser, command_named


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


def _replay_in_a_process(tmp_path, program: str) -> str:
    """`program` run as a process on a one-workload replay's arguments: its standard output."""
    (tmp_path / "cluster.csv").write_text("node,gpu_model,gpus\nn1,A100,8\n")
    (tmp_path / "trace.csv").write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\nw1,0,60,2,4\n")
    done = subprocess.run([sys.executable, "-c", program, "replay", "-q", "--trace", "trace.csv", "--cluster",
                           "cluster.csv", "--out", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=True)
    return done.stdout


def test_a_replay_freezes_what_is_left_at_exit_not_before(tmp_path):
    # Exit handlers run last in, first out: one registered before the command runs after its freeze.
    program = ("import atexit, gc, sys; from gpu_finops.cli import main; "
               "atexit.register(lambda: print('at exit', gc.get_freeze_count() > 0)); "
               "code = main(sys.argv[1:]); print('returned', gc.get_freeze_count() > 0); sys.exit(code)")
    assert _replay_in_a_process(tmp_path, program).splitlines()[-2:] == ["returned False", "at exit True"]


def test_a_replay_imports_pandas_only_where_its_columns_go_through_pa_array(tmp_path):
    """pyarrow's `pa.array` imports pandas to ask whether a list is a pandas object; the
    compiled build's column kernel (`scheduler/eventlog/columns.py`) never asks. So a compiled
    replay, which writes every file through the kernel, runs without pandas; the pure tree
    (no C kernel) goes through `pa.array` and imports it."""
    program = ("import sys; from gpu_finops.cli import main; code = main(sys.argv[1:]); "
               "from scheduler.eventlog import columns; "
               "print(columns.KERNEL is not None, 'pandas' in sys.modules)")
    out = _replay_in_a_process(tmp_path, program)
    kernel, pandas = out.split()[-2:]
    assert pandas != kernel, out  # the kernel and no pandas, or pandas and no kernel


# Threads of the process before and after numpy's import: OpenBLAS starts its workers then.
_BLAS_PROBE = ("import contextlib, os, sys; from gpu_finops.cli import main\n"
               "with contextlib.suppress(SystemExit): main(['replay', '--help'])\n"
               "assert 'numpy' not in sys.modules\n"
               "before = len(os.listdir('/proc/self/task'))\n"
               "import numpy\n"
               "print(os.environ.get('OPENBLAS_NUM_THREADS', '-'), len(os.listdir('/proc/self/task')) - before)")


def test_a_command_imports_numpy_without_openblas_worker_threads():
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", _BLAS_PROBE], capture_output=True, text=True, check=True,
                          timeout=120, env=env)
    assert done.stdout.split()[-2:] == ["1", "0"]  # the setting, and no thread started by numpy


def test_the_users_openblas_setting_wins():
    done = subprocess.run([sys.executable, "-c", _BLAS_PROBE], capture_output=True, text=True, check=True,
                          timeout=120, env={**os.environ, "OPENBLAS_NUM_THREADS": "2"})
    assert done.stdout.split()[-2] == "2"
