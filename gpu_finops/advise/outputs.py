"""What ``advise quotas`` writes, once every trial is told (files swapped into DIR one by one)::

    DIR/recommended.yaml   the recommended point's Kueue manifests (``replay --queues`` reads them)
    DIR/recommended.diff   a unified diff of them against the current manifests
    DIR/trials.csv         every trial: state, figures, feasibility, parameters and settings
    DIR/pareto.csv         the Pareto front (feasible trials no other feasible trial dominates)
    DIR/teams.csv          per team: today's figures beside the recommended point's
    DIR/pareto.png/.html   the Pareto front chart (Altair, rendered by vl-convert)
    DIR/advice.json        the recommendation: trial, figures, today's figures, files
    DIR/gpu-finops.duckdb  today's run and the recommended run built, with tables
                           advice_trials and advice_teams (dashboard page Advice)

Every figure is the mean over the replay seeds, with the half-width of its 95 % t interval
beside it (``*_ci95``; `gpu_finops.advise.seeds`). Pareto and recommendation: among the trials
that finished and meet every target, those no other such trial beats on both idle cost and cost
of delay; the recommendation is the one of least idle cost plus cost of delay (the earlier
trial on a tie). When no trial meets every target, the least total shortfall wins and the
command says so. The recommendation is a change only when it beats today's manifests beyond
the noise of the seeds (the paired 95 % interval of its improvement wholly above zero);
otherwise the advice says it is within the noise and to keep today's manifests.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console
from rich.table import Table

from gpu_finops.advise.figures import RunFigures
from gpu_finops.advise.seeds import Improvement, half_width, improvement
from gpu_finops.advise.space import SearchSpace
from gpu_finops.advise.trials import Advice, Inputs, Trial
from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.writes import write_files

DB_NAME = "gpu-finops.duckdb"
FILES = ("trials.csv", "pareto.csv", "teams.csv", "recommended.yaml", "recommended.diff", "pareto.png",
         "pareto.html", "advice.json", DB_NAME)
"""Every file `write_outputs` may write into DIR: checked before the first replay (`gpu_finops.advise.folder`)."""


def pareto_front(trials: list[Trial]) -> list[Trial]:
    feasible = [t for t in trials if t.feasible and t.figures is not None]
    front = []
    for t in feasible:
        assert t.figures is not None
        a = (t.figures.idle_cost, t.figures.cost_of_delay)
        dominated = False
        for other in feasible:
            assert other.figures is not None
            b = (other.figures.idle_cost, other.figures.cost_of_delay)
            if b[0] <= a[0] and b[1] <= a[1] and b != a:
                dominated = True
                break
        if not dominated:
            front.append(t)
    return front


def recommend(trials: list[Trial]) -> Trial | None:
    done = [t for t in trials if t.figures is not None]
    if not done:
        return None
    feasible = [t for t in done if t.feasible]
    if feasible:
        return min(feasible, key=lambda t: (t.figures.total if t.figures else 0.0, t.number))
    return min(done, key=lambda t: (round(sum(max(v, 0.0) for v in t.violations), 4),
                                    t.figures.total if t.figures else 0.0, t.number))


def against_today(advice: Advice, trial: Trial) -> Improvement | None:
    """The trial's improvement over today, paired seed by seed (None: not finished)."""
    if trial.figures is None or len(trial.seed_figures) != len(advice.today_seeds):
        return None
    return improvement(advice.today_seeds, trial.seed_figures)


def verdict_words(advice: Advice) -> str:
    """The recommendation against today's manifests, one sentence (`Improvement.verdict`)."""
    if advice.improvement is None:
        return "no change recommended: its figures over the replay seeds are incomplete"
    return advice.improvement.verdict()


def spreads(runs: list[RunFigures]) -> dict[str, float | None]:
    """Each objective's half-width of the 95 % t interval over the seeds (None: one seed)."""
    return {"idle_cost_ci95": half_width([r.idle_cost for r in runs]),
            "cost_of_delay_ci95": half_width([r.cost_of_delay for r in runs]),
            "total_ci95": half_width([r.total for r in runs])}


def trials_frame(advice: Advice) -> pl.DataFrame:
    front = {t.number for t in advice.pareto}
    chosen = advice.recommended.number if advice.recommended else None
    rows = []
    for t in advice.trials:
        f = t.figures
        better = against_today(advice, t)
        rows.append({"trial": str(t.number), "state": t.state, "feasible": t.feasible, "pareto": t.number in front,
                     "recommended": t.number == chosen, "seeds": len(t.seed_figures) if f else None,
                     "idle_cost": f.idle_cost if f else None,
                     "cost_of_delay": f.cost_of_delay if f else None, "total": f.total if f else None,
                     **(spreads(t.seed_figures) if f else dict.fromkeys(spreads([]), None)),
                     # today's total minus the trial's, paired seed by seed, and whether it is beyond the noise
                     "improvement": better.mean if better else None, "improvement_ci95": better.ci95 if better else None,
                     "beats_today": better.beyond_noise if better else None,
                     # apart from the objectives: what no quota of the trial served
                     "unservable_workloads": f.unservable_workloads if f else None,
                     "unservable_cost": f.unservable_cost if f else None,
                     "shortfall": round(sum(max(v, 0.0) for v in t.violations), 4), "error": t.error or None,
                     **{f"param:{k}": v for k, v in sorted(t.params.items())}, **t.point.columns()})
    return pl.DataFrame(rows, infer_schema_length=None)


def teams_frame(today: RunFigures, chosen: RunFigures | None) -> pl.DataFrame:
    names = sorted({t.team for t in today.teams} | ({t.team for t in chosen.teams} if chosen else set()))
    rows = []
    for name in names:
        row: dict[str, Any] = {"team": name}
        for label, figures in (("today", today), ("recommended", chosen)):
            team = figures.team(name) if figures else None
            for key in ("workloads", "p95_wait_h", "median_wait_h", "gpu_hours", "gpu_hour_share", "cost_of_delay",
                        "still_pending", "unservable", "unservable_cost"):
                row[f"{label}_{key}"] = getattr(team, key) if team else None
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def write_outputs(advice: Advice, space: SearchSpace, inputs: Inputs, console: Console) -> None:
    advice.pareto = pareto_front(advice.trials)
    advice.recommended = recommend(advice.trials)
    advice.improvement = against_today(advice, advice.recommended) if advice.recommended else None
    out = advice.out
    staging = out / f".advice.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        trials = trials_frame(advice)
        trials.write_csv(staging / "trials.csv")
        trials.filter(pl.col("pareto")).write_csv(staging / "pareto.csv")
        chosen = advice.recommended
        teams = teams_frame(advice.today, chosen.figures if chosen else None)
        _safe_csv(teams).write_csv(staging / "teams.csv")
        if chosen is not None:
            verdict = f"# {verdict_words(advice)}.\n"
            header = (f"# Kueue manifests recommended by `gpu-finops advise quotas` (trial {chosen.number} of "
                      f"{len(advice.trials)}):\n# least idle cost + cost of delay among the trials that meet every "
                      f"target. Check: gpu-finops replay --queues recommended.yaml …\n{verdict}")
            space.write(chosen.point, staging / "recommended.yaml", header)
            (staging / "recommended.diff").write_text(
                space.diff(chosen.point, f"current/{inputs.queues.name}", "recommended/recommended.yaml"), encoding="utf-8")
        _charts(trials, advice.today, staging)
        summary = _summary(advice, inputs)
        (staging / "advice.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        if chosen is not None:
            _database(advice, inputs, trials, teams, staging / DB_NAME)
        staged = {path.name: path.read_bytes() for path in sorted(staging.iterdir()) if path.is_file()}
        try:  # the one write discipline: never over a file of the user's or an input
            advice.files.extend(write_files(out, staged, what="--out", inputs=[
                inputs.trace, inputs.cluster, inputs.queues, inputs.prices, inputs.objectives]))
        except NotOurs as refused:
            raise InputError(out, str(refused).removeprefix(f"{out}: ")) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if chosen is not None and not chosen.feasible:
        console.print("[yellow]no trial meets every target: the recommendation is the one that misses them least[/]",
                      highlight=False)


def _safe_csv(frame: pl.DataFrame) -> pl.DataFrame:
    """Team names are user text: a cell a spreadsheet would run as a formula is neutralised."""
    from dashboards.report import neutralise_csv_value

    return frame.with_columns(pl.col("team").map_elements(neutralise_csv_value, return_dtype=pl.String))


def _shown(text: str) -> str:
    """User text for the terminal: control characters visible, rich markup escaped."""
    from rich.markup import escape

    from scheduler.eventlog.text import printable

    return escape(printable(text))


def _charts(trials: pl.DataFrame, today: RunFigures, folder: Path) -> None:
    import vl_convert

    from dashboards.advice_charts import pareto_chart

    frame = trials.filter(pl.col("idle_cost").is_not_null()).select(
        "trial", "idle_cost", "cost_of_delay", "total", "feasible", "pareto", "recommended").to_pandas()
    import pandas as pd

    frame = pd.concat([frame, pd.DataFrame([{"trial": "today", "idle_cost": today.idle_cost,
                                              "cost_of_delay": today.cost_of_delay, "total": today.total,
                                              "feasible": False, "pareto": False, "recommended": False}])],
                      ignore_index=True)
    spec = pareto_chart(frame).to_dict()
    (folder / "pareto.png").write_bytes(vl_convert.vegalite_to_png(spec, scale=2))
    (folder / "pareto.html").write_text(vl_convert.vegalite_to_html(spec, bundle=True), encoding="utf-8")


def _summary(advice: Advice, inputs: Inputs) -> dict[str, Any]:
    chosen, better = advice.recommended, advice.improvement
    return {
        "trials": len(advice.trials), "finished": sum(t.figures is not None for t in advice.trials),
        "failed": sum(t.state == "FAIL" for t in advice.trials),
        "pareto": [t.number for t in advice.pareto],
        "recommended": None if chosen is None else {
            "trial": chosen.number, "feasible": chosen.feasible, "run_id": f"advise-{chosen.name}",
            "figures": chosen.figures.as_dict() if chosen.figures else None, "settings": chosen.point.columns(),
            "change": advice.change, "improvement": better.mean if better else None,
            "improvement_ci95": better.ci95 if better else None,
            "spread": spreads(chosen.seed_figures), "seed_figures": [f.as_dict() for f in chosen.seed_figures]},
        "today": advice.today.as_dict(),
        "today_spread": spreads(advice.today_seeds),
        "today_seed_figures": [f.as_dict() for f in advice.today_seeds],
        "inputs": {"trace": inputs.trace.name, "cluster": inputs.cluster.name, "queues": inputs.queues.name,
                   "prices": inputs.prices.name, "profile": inputs.profile, "replay_seed": inputs.replay_seed,
                   "seeds": inputs.seeds},
    }


def _database(advice: Advice, inputs: Inputs, trials: pl.DataFrame, teams: pl.DataFrame, db: Path) -> None:
    """Today's run and the recommended run built into one database, with the advice tables."""
    from pipeline.build import build
    from pipeline.connect import connect

    chosen = advice.recommended
    assert chosen is not None
    build([advice.out / "runs" / "today", advice.out / "runs" / chosen.name], inputs.prices, db, show_progress=False)
    with connect(db) as con:
        trial_table = trials.select(  # noqa: F841 (read by DuckDB by name)
            "trial", "state", "feasible", "pareto", "recommended", "idle_cost", "cost_of_delay", "total", "shortfall",
            "seeds", "idle_cost_ci95", "cost_of_delay_ci95", "total_ci95", "improvement", "improvement_ci95",
            "beats_today")
        team_table = teams  # noqa: F841
        con.execute("CREATE OR REPLACE TABLE advice_trials AS SELECT * FROM trial_table")
        today, spread = advice.today, spreads(advice.today_seeds)  # the current manifests, as a row of their own
        con.execute("INSERT INTO advice_trials (trial, state, feasible, pareto, recommended, idle_cost, cost_of_delay, "
                    "total, shortfall, seeds, idle_cost_ci95, cost_of_delay_ci95, total_ci95) "
                    "VALUES ('today', 'TODAY', NULL, false, false, ?, ?, ?, NULL, ?, ?, ?, ?)",
                    [today.idle_cost, today.cost_of_delay, today.total, len(advice.today_seeds),
                     spread["idle_cost_ci95"], spread["cost_of_delay_ci95"], spread["total_ci95"]])
        con.execute("CREATE OR REPLACE TABLE advice_teams AS SELECT * FROM team_table")
        con.execute("CREATE OR REPLACE TABLE advice_runs AS SELECT * FROM (VALUES (?, 'today'), (?, 'recommended')) "
                    "t(run_id, setting)", ["advise-today", f"advise-{chosen.name}"])
    Path(f"{db}.wal").unlink(missing_ok=True)


def print_advice(advice: Advice, console: Console) -> None:
    chosen = advice.recommended
    console.print(f"{len(advice.trials)} trials ({advice.ran} replayed now, {advice.seconds:.0f} s), "
                  f"{len(advice.pareto)} on the Pareto front", highlight=False)
    if chosen is None or chosen.figures is None:
        console.print("[red]no trial finished: nothing to recommend[/]")
        return
    f, today = chosen.figures, advice.today
    seeds = len(advice.today_seeds)
    mine, todays = spreads(chosen.seed_figures), spreads(advice.today_seeds)

    def pm(value: float | None) -> str:  # the 95 % interval's half-width, when the seeds measure one
        return "" if value is None else f" ± ${value:,.2f}"

    console.print(f"{'recommended' if advice.change else 'best'}: trial {chosen.number}: idle ${f.idle_cost:,.2f}"
                  f"{pm(mine['idle_cost_ci95'])} (today ${today.idle_cost:,.2f}{pm(todays['idle_cost_ci95'])}), "
                  f"cost of delay ${f.cost_of_delay:,.2f}{pm(mine['cost_of_delay_ci95'])} "
                  f"(today ${today.cost_of_delay:,.2f}{pm(todays['cost_of_delay_ci95'])}), means over {seeds} "
                  f"replay seed{'s' if seeds > 1 else ''}{' (± the 95 % interval)' if seeds > 1 else ''}",
                  highlight=False)
    console.print(verdict_words(advice), style=None if advice.change else "yellow", highlight=False, markup=False)
    table = Table(title="per team: today → recommended")
    for column in ("team", "p95 wait h", "GPU-hour share", "cost of delay", "still pending"):
        table.add_column(column, justify="left" if column == "team" else "right")
    for name in sorted({t.team for t in today.teams} | {t.team for t in f.teams}):
        a, b = today.team(name), f.team(name)
        table.add_row(_shown(name), *(f"{getattr(a, k, 0):{fmt}} → {getattr(b, k, 0):{fmt}}" for k, fmt in (
            ("p95_wait_h", ",.2f"), ("gpu_hour_share", ".1%"), ("cost_of_delay", ",.0f"), ("still_pending", ","))))
    console.print(table)
    for path in advice.files:
        if path.suffix in (".yaml", ".csv", ".png", ".duckdb"):
            console.print(f"  {path}", highlight=False)
