"""`gpu-finops demo`: the whole flow on the bundled demo preset, in one command.

generate (preset `demo`, seed 42) → replay under `gang-v1.37` (the main run, `run/`) and
under `kube-default` (the no-gang baseline, `run-kube-default/`) → build both into one
DuckDB file with a FOCUS export → validate → report → dashboard, both with the demo's
budgets (`presets/demo-budgets.csv`, copied to `inputs/budgets.csv`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rich.console import Console

from gpu_finops.progress import replay_progress

DEMO_SEED = 42
# Monthly budgets of the demo's teams and of the cost centres their `cost-center` pod label
# names: illustrative figures, set so that the demo shows each status (within, trending over).
DEMO_BUDGETS = Path(__file__).parent / "presets" / "demo-budgets.csv"


def run_demo(out: Path, *, serve: bool, port: int = 8501, quiet: bool = False) -> int:
    from dashboards.report import write_report
    from gpu_finops.generator import generate
    from pipeline.build import build
    from pipeline.validate import validate_db
    from scheduler.commands import replay

    console = Console(file=sys.stderr, quiet=quiet)
    began = time.monotonic()
    out = out.resolve()
    inputs = out / "inputs"
    console.print(f"[bold]1/5[/] generating the demo preset → {inputs}")
    generate("demo", inputs, seed=DEMO_SEED)
    budgets = inputs / "budgets.csv"
    budgets.write_bytes(DEMO_BUDGETS.read_bytes())
    runs = []
    for profile, folder in (("gang-v1.37", "run"), ("kube-default", "run-kube-default")):
        console.print(f"[bold]2/5[/] replaying under {profile} → {out / folder}")
        with replay_progress(profile, not quiet) as progress:
            result = replay(
                inputs / "trace.csv",
                inputs / "cluster.csv",
                out / folder,
                profile=profile,
                seed=DEMO_SEED,
                queues=inputs / "queues.yaml",
                run_id=f"demo-{profile}",
                progress=progress,
            )
        runs.append(result.run_dir)
    db = out / "gpu-finops.duckdb"
    console.print(f"[bold]3/5[/] building cost records → {db}")
    build(runs, inputs / "prices.csv", db, export=out / "export", show_progress=not quiet)
    violations = validate_db(db)
    for v in violations:
        console.print(f"[red]FAIL[/] {v.check}: {v.count} row(s); e.g. {v.example}")
    console.print(f"[bold]4/5[/] writing the report → {out / 'report'}")
    write_report(db, out / "report", formats=("html", "md", "csv"), budgets=budgets)
    console.print(f"done in {time.monotonic() - began:.0f}s: {db}, {out / 'report' / 'index.html'}")
    if violations:
        return 1
    if serve:
        from dashboards.serve import serve as serve_dashboard

        console.print("[bold]5/5[/] serving the dashboard (Ctrl-C to stop)")
        serve_dashboard(db, port=port, host="127.0.0.1", block=True, budgets=budgets)
    return 0
