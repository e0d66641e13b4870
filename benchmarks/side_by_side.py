"""The hidden-size workload replayed side by side: this tree against another build or checkout.

    python -m benchmarks.side_by_side [--against DIR | --pure] [--pairs 2] [--kueue both] [--pods 100000]

Issue 27's targets are CPU seconds for a 100,000-pod / 2,000-node workload, measured side by
side. This replays the large preset cut at 100,000 pods (`[preset] extends = "large"`,
`max_pods = 100000`: 45,855 workloads on 2,052 nodes, seed 42) under gang-v1.37, without
Kueue and with the preset's Kueue manifests, through the real CLI, one process per replay:

- A is this tree as installed (the compiled build when it is current);
- B is the same tree's pure Python build (`--pure`, the default), or another checkout of the
  project (`--against DIR`, e.g. a `git worktree` of the commit an issue was filed against),
  run by this interpreter with DIR first on its path.

A and B alternate (A B A B …), so a machine whose speed drifts moves both; each replay's CPU
seconds (user + system) are the operating system's accounting of that child alone. The table
gives the medians, the ratio A ÷ B pair by pair (its median) and the target (≤ 12 CPU s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

HIDDEN_PODS = 100_000


def preset(pods: int) -> str:
    """The large preset cut at `pods` (the hidden size by default)."""
    return f'[preset]\nextends = "large"\nname = "hidden-{pods}"\nmax_pods = {pods}\n'
TARGET_CPU_S = 12.0
_CLI = "import sys; from gpu_finops.cli import main; sys.exit(main())"


def cpu_seconds(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    """Run `command` to its end; its own user + system CPU seconds (a failure raises)."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode:
        raise SystemExit(f"side_by_side: {' '.join(command[3:6])} … exited {process.returncode}: {errors.strip()[-300:]}")
    return usage.ru_utime + usage.ru_stime


def _replay_args(inputs: Path, out: Path, kueue: bool) -> list[str]:
    args = ["replay", "-q", "--trace", str(inputs / "trace.csv"), "--cluster", str(inputs / "cluster.csv"),
            "--seed", "42", "--out", str(out)]
    return args + (["--queues", str(inputs / "queues.yaml")] if kueue else [])


def side_by_side(pairs: int, kueue_modes: list[bool], against: Path | None, console: Console,
                 pods: int = HIDDEN_PODS) -> Table:
    from gpu_finops.generator import generate

    b_name = f"B: {against.name}" if against else "B: pure"
    size = "hidden-size workload" if pods == HIDDEN_PODS else f"large preset cut at {pods:,} pods"
    table = Table(title=f"{size} side by side, CPU s (medians of {pairs} pairs, A B A B …)")
    for column in ("run", "A: this tree", b_name, "A ÷ B", "speed-up", f"A ≤ {TARGET_CPU_S:g} s"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="gpu-finops-side-") as tmp:
        root = Path(tmp)
        (root / "hidden.toml").write_text(preset(pods), encoding="utf-8")
        began = time.perf_counter()
        files = generate(str(root / "hidden.toml"), root / "in", seed=42)
        console.print(f"generated: {files.pods:,} pods on {files.nodes:,} nodes ({time.perf_counter() - began:.0f} s)")
        a_env = dict(os.environ)
        b_env = dict(os.environ)
        if against is None:
            b_env["GPU_FINOPS_PURE"] = "1"
        for kueue in kueue_modes:
            a_times, b_times = [], []
            for pair in range(pairs):
                args = _replay_args(root / "in", root / "out-a", kueue)
                a_times.append(cpu_seconds([sys.executable, "-c", _CLI, *args], env=a_env))
                args = _replay_args(root / "in", root / "out-b", kueue)
                b_times.append(cpu_seconds([sys.executable, "-c", _CLI, *args], cwd=against, env=b_env))
                console.print(f"{'with' if kueue else 'without'} Kueue, pair {pair + 1}: "
                              f"A {a_times[-1]:.1f} s, B {b_times[-1]:.1f} s")
            ratio = statistics.median(a / b for a, b in zip(a_times, b_times, strict=True))
            a_median = statistics.median(a_times)
            table.add_row("with the preset's Kueue manifests" if kueue else "without Kueue", f"{a_median:.1f}",
                          f"{statistics.median(b_times):.1f}", f"{ratio:.3f}", f"{1 / ratio:.2f} ×",
                          ("yes" if a_median <= TARGET_CPU_S else "no") if pods == HIDDEN_PODS else "—")
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.side_by_side")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--against", type=Path, help="B: another checkout of the project (its top folder)")
    which.add_argument("--pure", action="store_true", help="B: this tree's pure Python build (the default)")
    parser.add_argument("--pairs", type=int, default=2, help="A B pairs per run (%(default)s)")
    parser.add_argument("--kueue", choices=("both", "with", "without"), default="both")
    parser.add_argument("--pods", type=int, default=HIDDEN_PODS,
                        help="cut the large preset at this many pods (%(default)s: the hidden size; "
                             "the target applies only to it)")
    args = parser.parse_args(argv)
    if args.against is not None and not (args.against / "gpu_finops" / "cli.py").is_file():
        parser.error(f"--against {args.against}: not a checkout of the project (no gpu_finops/cli.py)")
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if args.pods < 1:
        parser.error("--pods must be at least 1")
    modes = {"both": [False, True], "with": [True], "without": [False]}[args.kueue]
    console = Console(width=None if sys.stdout.isatty() else 160)
    against = args.against.resolve() if args.against else None
    console.print(side_by_side(args.pairs, modes, against, console, args.pods))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
