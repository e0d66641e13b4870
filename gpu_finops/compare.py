"""`gpu-finops compare RUN_A RUN_B`: two replays side by side.

Run directories are built into a temporary database first (so `--prices` is needed);
with `--db`, the two arguments are run ids already built there. Every number comes from
the marts through a read-only connection with bound parameters.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.connect import connect
from pipeline.errors import PipelineError
from scheduler.eventlog.text import printable

IDLE_CAUSES = ("fragmentation", "quota", "gang_barrier", "no_demand")


@dataclass
class RunFigures:
    run_id: str
    profile: str
    hours: float
    figures: dict[str, float]
    cost_by_team: dict[str, float]


def _figures(con: duckdb.DuckDBPyConnection, run_id: str) -> RunFigures:
    found = con.execute("SELECT profile, horizon_s / 3600.0 FROM dim_runs WHERE run_id = ?", [run_id]).fetchone()
    if found is None:
        known = ", ".join(r[0] for r in con.execute("SELECT run_id FROM dim_runs ORDER BY 1").fetchall())
        raise PipelineError(f"run {run_id!r} is not in the database (it has: {known})")
    profile, hours = found
    by_class = dict(con.execute(
        """SELECT CASE WHEN x_UsageClass = 'idle' THEN 'idle:' || x_IdleReason ELSE x_UsageClass END,
                  SUM(PricingQuantity)
           FROM focus_cost_records
           WHERE x_RunId = ? AND ChargeCategory = 'Usage' AND coalesce(x_Resource, 'gpu') = 'gpu'
           GROUP BY 1""", [run_id]).fetchall())
    waits = con.execute(
        """SELECT AVG(wait_s), QUANTILE_CONT(wait_s, 0.95), SUM(preemptions),
                  COUNT(*) FILTER (WHERE partial_placement), COUNT(*) FILTER (WHERE final_state = 'finished')
           FROM fct_workloads WHERE run_id = ?""", [run_id]).fetchone()
    cost = con.execute("SELECT SUM(EffectiveCost) FROM focus_cost_records WHERE x_RunId = ?", [run_id]).fetchone()[0]
    figures = {
        "window (hours)": hours,
        "total cost (USD)": cost or 0.0,
        "productive GPU-hours": by_class.get("productive", 0.0),
        "partial placement GPU-hours (gang_wait)": by_class.get("gang_wait", 0.0),
        "lost to preemption GPU-hours": by_class.get("lost_to_preemption", 0.0),
        **{f"idle GPU-hours: {cause}": by_class.get(f"idle:{cause}", 0.0) for cause in IDLE_CAUSES},
        "mean wait (s)": waits[0] or 0.0,
        "p95 wait (s)": waits[1] or 0.0,
        "preemptions": float(waits[2] or 0),
        "partially placed workloads": float(waits[3] or 0),
        "finished workloads": float(waits[4] or 0),
    }
    teams = dict(con.execute(
        "SELECT coalesce(x_Tenant, '__commitments__'), SUM(EffectiveCost) FROM focus_cost_records "
        "WHERE x_RunId = ? GROUP BY 1 ORDER BY 1",
        [run_id]).fetchall())
    return RunFigures(run_id, profile, hours, figures, teams)


def compare(first: str, second: str, *, db: Path | None, prices: Path | None, console: Console) -> None:
    if db is None:
        if prices is None:
            raise PipelineError("compare needs --prices to cost two run directories (or --db with two run ids)")
        from pipeline.build import build

        with tempfile.TemporaryDirectory(prefix="gpu-finops-compare-") as tmp:
            result = build([Path(first), Path(second)], prices, Path(tmp) / "compare.duckdb", show_progress=False)
            if len(set(result.run_ids)) < 2:
                raise PipelineError("both run directories have the same run id; replay one with --run-id")
            _print(Path(tmp) / "compare.duckdb", result.run_ids[0], result.run_ids[1], console)
        return
    if not db.is_file():
        raise PipelineError(f"database not found: {db}")
    _print(db, first, second, console)


def _print(db: Path, first: str, second: str, console: Console) -> None:
    con = connect(db, read_only=True)
    try:
        a, b = _figures(con, first), _figures(con, second)
    finally:
        con.close()
    table = Table(title=_text(f"{a.run_id} ({a.profile})  vs  {b.run_id} ({b.profile})"))
    table.add_column("metric")
    for label in (a.run_id, b.run_id, "difference"):
        table.add_column(_text(label), justify="right")
    for metric, value in a.figures.items():
        other = b.figures[metric]
        table.add_row(metric, f"{value:,.1f}", f"{other:,.1f}", f"{other - value:+,.1f}")
    table.add_section()
    for team in sorted(set(a.cost_by_team) | set(b.cost_by_team)):
        x, y = a.cost_by_team.get(team, 0.0), b.cost_by_team.get(team, 0.0)
        table.add_row(_text(f"cost: {team} (USD)"), f"{x:,.2f}", f"{y:,.2f}", f"{y - x:+,.2f}")
    console.print(table)
    if abs(a.hours - b.hours) > 1e-9:
        console.print(
            f"[dim]The runs cover different windows ({a.hours:.0f} h and {b.hours:.0f} h: each lasts until its "
            "last pod ends), so idle GPU-hours include the drain after the last arrival.[/]"
        )


def _text(value: str) -> Text:
    """A run id or team name as plain text: no rich markup, control characters neutralised."""
    return Text(printable(value))
