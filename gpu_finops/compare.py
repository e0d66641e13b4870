"""`gpu-finops compare RUN...`: any number of replays ranked against a baseline, and two
side by side.

Run directories are built into a temporary database first (so `--prices` is needed); with
`--db`, the arguments are run ids already built there (`--all`: every run of it, e.g. a
sweep's). The ranking is the dashboard's Scenarios table (dashboards.data.scenario_ranking);
with exactly two runs the metric-by-metric table and cost per team follow. Every number comes
from the marts through a read-only connection with bound parameters.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dashboards.labels import words
from pipeline.connect import connect
from pipeline.errors import PipelineError
from pipeline.registry import IDLE_CAUSE_NAMES
from scheduler.eventlog.text import printable

IDLE_CAUSES = IDLE_CAUSE_NAMES  # the one registry, in precedence order
COMMITMENT_TENANT = "__commitment__"  # x_Tenant of the commitment purchases (docs/contracts.md)
COMMITMENTS_LINE = "Commitment purchases"


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
           FROM fct_workloads WHERE run_id = ?""", [run_id]).fetchone() or (None,) * 5
    cost = (con.execute("SELECT SUM(EffectiveCost) FROM focus_cost_records WHERE x_RunId = ?", [run_id]).fetchone()
            or (None,))[0]
    figures = {
        "window (hours)": hours,
        "total cost (USD)": cost or 0.0,
        "productive GPU-hours": by_class.get("productive", 0.0),
        "partial placement GPU-hours": by_class.get("gang_wait", 0.0),
        "lost to preemption GPU-hours": by_class.get("lost_to_preemption", 0.0),
        **{f"idle GPU-hours: {str(words(cause)).lower()}": by_class.get(f"idle:{cause}", 0.0)
           for cause in IDLE_CAUSES},
        "mean wait (h)": (waits[0] or 0.0) / 3600,
        "p95 wait (h)": (waits[1] or 0.0) / 3600,
        "preemptions": float(waits[2] or 0),
        "partially placed workloads": float(waits[3] or 0),
        "finished workloads": float(waits[4] or 0),
    }
    # the marts' pseudo-tenants by the names the pages use: the platform line, commitments
    teams = {str(words(team)): float(cost) for team, cost in con.execute(
        "SELECT CASE WHEN x_Tenant IS NULL OR x_Tenant = $commitment THEN $commitments ELSE x_Tenant END, "
        "SUM(EffectiveCost) FROM focus_cost_records WHERE x_RunId = $run GROUP BY 1 ORDER BY 1",
        {"run": run_id, "commitment": COMMITMENT_TENANT, "commitments": COMMITMENTS_LINE}).fetchall()}
    return RunFigures(run_id, profile, hours, figures, teams)


@dataclass(frozen=True)
class RankingOptions:
    baseline: str | None = None  # default: dashboards.data.default_baseline
    rank_by: str = "cost_per_productive_gpu_hour"
    window: str = "common"
    output: str = "table"  # table | csv | json


def compare(runs: list[str], *, db: Path | None, prices: Path | None, console: Console, all_runs: bool = False,
            options: RankingOptions | None = None) -> None:
    options = options or RankingOptions()
    if db is None:
        if prices is None:
            raise PipelineError("compare needs --prices to cost run directories (or --db with run ids)")
        if len(runs) < 2:
            raise PipelineError("compare needs two or more run directories")
        from pipeline.build import build

        with tempfile.TemporaryDirectory(prefix="gpu-finops-compare-") as tmp:
            result = build([Path(r) for r in runs], prices, Path(tmp) / "compare.duckdb", show_progress=False)
            if len(set(result.run_ids)) < len(runs):
                raise PipelineError("two run directories have the same run id; replay one with --run-id")
            _report(Path(tmp) / "compare.duckdb", list(result.run_ids), console, options)
        return
    if not db.is_file():
        raise PipelineError(f"database not found: {db}")
    if all_runs:
        if runs:
            raise PipelineError("give run ids or --all, not both")
        con = connect(db, read_only=True)
        try:
            runs = [r for (r,) in con.execute("SELECT run_id FROM dim_runs ORDER BY run_id").fetchall()]
        finally:
            con.close()
    if len(runs) < 2:
        raise PipelineError("compare needs two or more runs (or --all with --db)")
    _report(db, runs, console, options)


RANKED_COLUMNS = (  # (column, header, format)
    ("rank", "#", "{:.0f}"), ("label", "scenario", "{}"), ("total_cost", "cost $", "{:,.2f}"),
    ("cost_per_productive_gpu_hour", "$/useful GPU-h", "{:,.2f}"),
    ("cost_per_finished_workload", "$/finished", "{:,.2f}"), ("total_cost_vs_baseline", "vs base $", "{:+,.2f}"), ("waste_cost", "waste $", "{:,.2f}"),
    ("idle_fragmentation_gpu_hours", "idle frag h", "{:,.1f}"), ("idle_quota_gpu_hours", "idle quota h", "{:,.1f}"),
    ("idle_gang_barrier_gpu_hours", "idle barrier h", "{:,.1f}"),
    ("idle_no_demand_gpu_hours", "idle no-demand h", "{:,.1f}"),
    ("partial_placement_gpu_hours", "partial h", "{:,.1f}"), ("lost_gpu_hours", "lost h", "{:,.1f}"),
    ("preemption_waste_cost", "lost $", "{:,.2f}"), ("mean_wait_h", "wait h", "{:,.2f}"),
    ("p95_wait_h", "p95 wait h", "{:,.2f}"), ("finished", "finished", "{:.0f}"),
)


def _report(db: Path, runs: list[str], console: Console, options: RankingOptions) -> None:
    from dashboards import data

    con = data.connect_read_only(db)
    try:
        ranking = data.scenario_ranking(con, tuple(runs), options.baseline, options.rank_by, options.window)
    finally:
        con.close()
    if options.output == "csv":
        from dashboards.report import neutralise_csv_frame

        console.file.write(neutralise_csv_frame(ranking).to_csv(index=False))
        return
    if options.output == "json":
        console.file.write(ranking.to_json(orient="records", date_format="iso", indent=2) + "\n")
        return
    label = next(m[1] for m in data.RANKING_METRICS if m[0] == options.rank_by)
    baseline = str(ranking.loc[ranking["is_baseline"], "run_id"].iloc[0])
    table = Table(title=f"{len(ranking)} runs ranked by {(label[:1].lower() + label[1:])}, against {baseline}")
    for _, header, _ in RANKED_COLUMNS:
        table.add_column(header, justify="left" if header == "scenario" else "right")
    for row in ranking.assign(label=[(s if isinstance(s, str) and s else r) + (" (baseline)" if b else "")
                                     for s, r, b in zip(ranking["scenario"], ranking["run_id"],
                                                        ranking["is_baseline"], strict=True)]).to_dict("records"):
        table.add_row(*("" if row[c] is None or row[c] != row[c] else f.format(row[c]) for c, _, f in RANKED_COLUMNS))
    console.print(table)
    console.print(data.why_the_winner_wins(ranking, options.rank_by), markup=False, highlight=False)
    if len(runs) == 2:
        others = [r for r in ranking["run_id"] if r != baseline]
        _print(db, baseline, others[0], console)


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
        digits = 2 if metric.endswith("wait (h)") else 1
        table.add_row(metric, f"{value:,.{digits}f}", f"{other:,.{digits}f}", f"{other - value:+,.{digits}f}")
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
