"""Batch report: a self-contained HTML page, CSV tables, Markdown and PNG charts.

The HTML needs no network: charts are rendered to SVG by vl-convert (no browser, no CDN) and
embedded as data URIs. Files are written to a temporary folder inside ``out_dir`` and renamed
into place one by one, so a reader never sees a half-written file under its final name.

User text (teams, workload and run ids) is escaped for each medium: control characters are
neutralised everywhere (`dashboards.text.printable`: a chart renderer aborts on them, a
terminal runs them), HTML is escaped in the page, Markdown punctuation (``<script>``,
``[x](javascript:…)``) is backslash-escaped in report.md, and CSV cells cannot start a
formula.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from dashboards import advice_charts, cells, charts, data, finops_charts, labels, scenario_charts
from dashboards.errors import DashboardError
from dashboards.report_cascades import costliest_chains_section
from dashboards.report_render import (
    WHOLE_RUN,
    Section,
    headline_rows,
    png,
    render_html,
    render_markdown,
)
from dashboards.text import markdown_text, printable, printable_value  # noqa: F401 (markdown_text: re-exported)
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.writes import neutralise_formula, write_files

FORMATS = ("html", "csv", "md", "png")
SECTIONS = (
    "scenario_ranking", "runs_compared", "runs_waits", "spend_by_team", "usage_class_over_time",
    "chargeback", "chargeback_by_label", "idle_cost_by_cause", "idle_avoidable_or_sunk", "commitment_pools", "unservable_demand",
    "pending_demand", "checkpoint_loss", "costliest_chains", "cost_per_training_run", "costliest_workloads",
    "partial_placement_workloads", "pending_by_reason", "pending_workloads", "advice_pareto", "advice_teams",
    "budget_burn", "budget_anomalies",
)
"""Every section's slug: the stem of its CSV and PNG files (`_collect` refuses any other)."""


def report_file_names() -> frozenset[str]:
    """Every file name a report may write (to tell a report folder from a user's folder)."""
    return frozenset({"index.html", "report.md", "headline.csv"}
                     | {f"{slug}.{ext}" for slug in SECTIONS for ext in ("csv", "png")})
# --------------------------------------------------------------------------------------------
# Safety helpers (shared with the dashboard's CSV downloads)
# --------------------------------------------------------------------------------------------


def neutralise_csv_value(value: Any) -> Any:
    """Prefix text that a spreadsheet would run as a formula with a single quote (the rule
    every stage shares: `scheduler.eventlog.writes.neutralise_formula`)."""
    return neutralise_formula(value)


def neutralise_csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells (and column names) are safe to open in a spreadsheet.

    Numbers stay numbers: a negative amount is data, not a formula.
    """
    safe = df.copy()
    for column in safe.columns:
        values = safe[column]
        if isinstance(values.dtype, pd.CategoricalDtype):  # DuckDB ENUMs arrive as categories
            values = values.astype(object)
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            safe[column] = values.map(neutralise_csv_value).astype(object)
    safe.columns = [neutralise_csv_value(str(c)) for c in safe.columns]
    return safe


def safe_output_path(out_dir: Path, name: str) -> Path:
    """``out_dir / name``, refusing any name that would land outside ``out_dir``."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise DashboardError(f"refusing report file name {name!r}: it must be a plain file name")
    root = Path(out_dir).resolve()
    target = (root / name).resolve()
    if target.parent != root:
        raise DashboardError(f"refusing to write {name!r} outside {root}")
    return root / name


# --------------------------------------------------------------------------------------------
# Content
# --------------------------------------------------------------------------------------------


# The ranked table's columns in the report (the CSV has every column of scenario_ranking).
RANKING_COLUMNS = (
    "rank", "scenario", "run_id", "profile", "queues", "scoring", "preemption", "seed", "total_cost",
    "total_cost_vs_baseline", "total_cost_vs_baseline_pct", "waste_cost", "idle_fragmentation_gpu_hours",
    "idle_quota_gpu_hours", "idle_gang_barrier_gpu_hours", "idle_no_demand_gpu_hours",
    "partial_placement_gpu_hours", "lost_gpu_hours", "preemption_waste_cost", "preemptions", "mean_wait_h",
    "p95_wait_h", "finished",
)


def _ranking_section(con, baseline: str | None, rank_by: str) -> Section:
    """Every run of the database ranked against ``baseline`` (a sweep's scenarios, say; default
    ``data.default_baseline``), over the hours every run covers."""
    runs = tuple(data.list_runs(con)["run_id"])
    ranking = data.scenario_ranking(con, runs, baseline, rank_by, data.DEFAULT_WINDOW)
    baseline = str(ranking.loc[ranking["is_baseline"], "run_id"].iloc[0])
    breakdown = data.scenario_cost_breakdown(con, runs, data.DEFAULT_WINDOW)
    label = next(m[1] for m in data.RANKING_METRICS if m[0] == rank_by)
    label = label[:1].lower() + label[1:]  # "cost per productive GPU-hour": the units keep their case
    shown = ranking[[c for c in RANKING_COLUMNS if c in ranking]].copy()
    shown["is_baseline"] = ranking["is_baseline"]
    return Section(
        "scenario_ranking", "Scenarios ranked",
        f"Every run in this database ranked by {label}, best first, against the baseline {baseline}, "
        "over the hours every run covers. " + data.why_the_winner_wins(ranking, rank_by) + " Idle GPU-hours by cause; partial placement is "
        "GPU-hours held by incomplete gangs; preemption waste is the work lost since the last checkpoint.",
        shown.drop(columns=["is_baseline"]),
        lambda _table: scenario_charts.scenario_ranking_chart(breakdown, shown),
        window="the hours every run of the database covers (every phase; the date and phase filters do not apply)",
    )


ADVICE_WINDOW = ("each trial's own replay (the advice database's runs, not the report's selection): idle "
                 "cost over its steady phase, waits and cost of delay over the whole run")


def _advice_sections(con) -> list[Section]:
    """The quota advice, when the database is the one `gpu-finops advise quotas` wrote."""
    trials = data.advice_trials(con)
    if trials.empty:
        return []
    done = trials[trials["idle_cost"].notna()]
    return [
        Section("advice_pareto", "Advice: quota trials and their Pareto front",
                 "Each trial replays the trace under other Kueue quotas (gpu-finops advise quotas). The Pareto "
                 "front: trials meeting every target that no other beats on both idle cost (steady window) and "
                 "cost of delay; recommended: least idle cost plus cost of delay (docs/advice.md).",
                 trials, lambda _table: advice_charts.pareto_chart(done), window=ADVICE_WINDOW),
        Section("advice_teams", "Advice: per team, today and recommended",
                 "Each team's p95 wait, share of GPU-hours and cost of delay under today's manifests and under "
                 "the recommended ones (recommended.yaml).", data.advice_teams(con),
                 lambda table: advice_charts.team_comparison_chart(table, "p95_wait_h", "p95 wait (h)"),
                 window=ADVICE_WINDOW),
    ]


def budget_tables(con, run_id: str, budgets: Path, as_of: date,
                  cost_centre_label: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, str | None]:
    """(burn, anomalies, the cost-centre label key or None) of a budgets file on ``run_id``.
    ``cost_centre_label``: the pod label carrying the cost centres (default: cost-center, else
    cost_center, where some workload carries one; else the file's team rows group the teams)."""
    from dashboards import budgets as budget_rules

    book = budget_rules.read_budgets(budgets)
    key = data.cost_centre_label(con, run_id, cost_centre_label)
    centres = None if key is None else budget_rules.CentreSpend(key, data.daily_label_spend(con, run_id, key))
    budget_rules.check_names(book, data.list_tenants(con, run_id), run_id, centres)
    daily = data.daily_team_spend(con, run_id)
    run_days = data.run_date_range(con, run_id)
    steady = budget_rules.steady_days(data.run_phases(con, run_id))
    return (budget_rules.burn(daily, book, as_of, centres, run_days), budget_rules.anomalies(daily, centres, steady),
            key)


def budget_names(burned: pd.DataFrame) -> str:
    """"over budget: a, cost centre x; trending over: b", or "" when every budget is on track."""
    from dashboards import budgets as budget_rules

    over, trending = budget_rules.teams_to_name(burned)
    return "; ".join(part for part in (f"over budget: {', '.join(over)}" if over else "",
                                       f"trending over: {', '.join(trending)}" if trending else "") if part)


def budget_sections(con, run_id: str, budgets: Path, as_of: date,
                    cost_centre_label: str | None = None) -> list[Section]:
    """Budgets and burn of every budgeted team and cost centre, and the anomalous days of each
    team and cost centre."""
    from dashboards import budgets as budget_rules

    burned, flagged, key = budget_tables(con, run_id, budgets, as_of, cost_centre_label)
    centres = (f"a cost centre's spend is what the workloads carrying its value of the pod label {key} are "
               "charged, whatever their team" if key else "a cost centre's spend is its teams' (the budgets "
               "file's team rows)")
    whose = "team's or cost centre's" if key else "team's"
    budget_window = (f"calendar days of each budget's month up to {as_of} (UTC), every phase: a budget is "
                     "spent on every day, not only in the report's phase")
    return [
        Section("budget_burn", "Budgets and burn",
                 f"Spend to {as_of} (what each team is charged, its idle share included; {centres}) against its "
                 "monthly budget, and a forecast to the end of the month with a 95% prediction interval (mean "
                 f"daily spend over the days with cost records, t quantile; docs/reports.md). {budget_names(burned) or 'Every budget is on track.'}",
                 burned, finops_charts.budget_burn_chart, window=budget_window),
        Section("budget_anomalies", "Anomalous days",
                 f"Days whose spend or idle share is far from the {whose} usual day before them (modified "
                 f"z-score above {budget_rules.Z_THRESHOLD}).", flagged,
                 window="whole days of the run's steady phase, each judged against the days before it "
                        "(the warm-up and the drain are not a usual day)"),
    ]


def budget_status(db: Path, run_id: str | None, budgets: Path, as_of: date | None,
                  cost_centre_label: str | None = None) -> tuple[list[str], list[str]]:
    """(over budget, trending over) for a scheduled report's outcome line: the report's run
    (default: the first), to ``as_of`` (default: the run's last day); cost centres as
    ``cost centre <name>``."""
    from dashboards import budgets as budget_rules

    con = data.connect_read_only(data.require_db(db))
    try:
        run_id = run_id or str(data.list_runs(con)["run_id"].iloc[0])
        run_range = data.run_date_range(con, run_id)
        day = as_of or (run_range[1] if run_range else date.today())
        burned, _, _ = budget_tables(con, run_id, budgets, day, cost_centre_label)
    finally:
        con.close()
    return budget_rules.teams_to_name(burned)


def _label_section(con, filters: data.Filters, label_key: str) -> Section:
    """The chargeback by a pod label's value (fct_label_allocation, policy `window`), the
    groups in words."""
    frame = data.label_showback(con, filters, label_key, "window")
    table = frame.assign(allocation=frame["allocation"].map(labels.allocation_name)).rename(
        columns={"allocation": label_key})

    def chart(df: pd.DataFrame) -> alt.TopLevelMixin:
        return charts.team_chargeback_chart(df.rename(columns={label_key: "tenant"}),
                                            title=f"Charged cost per {label_key}")

    return Section("chargeback_by_label", f"Chargeback per {label_key}",
                    f"The same bill by the value of the pod label {label_key} (fct_label_allocation, "
                    "policy `window`): workloads without it are Unlabelled, idle nobody could carry is "
                    "Unallocated (idle). The rows add up to the chargeback per team.", table, chart)


def _collect(db: Path, filters: data.Filters, baseline: str | None = None,
             rank_by: str = data.DEFAULT_RANK_BY, budgets: Path | None = None,
             label_key: str | None = None,
             cost_centre_label: str | None = None) -> tuple[dict[str, float], list[Section], str]:
    con = data.connect_read_only(db)
    try:
        run_range = data.run_date_range(con, filters.run_id)
        # the hours the selection covers, the phase cut to the dates: "steady phase, 2026-11-02
        # 16:00 to 2026-11-09 00:00 UTC" (the dates alone overstated the phase's end)
        window = data.window_label(filters, data.run_phases(con, filters.run_id))
        bucket = data.pick_time_bucket(filters, run_range)
        metrics = {**data.headline_metrics(con, filters), **data.savings(con, filters),
                   # efficiency is None when nothing is measured: left out, the row says unknown
                   **{k: v for k, v in data.allocated_idle(con, filters).items() if v is not None}}
        pending = data.pending_workloads(con, filters)
        sections = []
        if len(data.list_runs(con)) > 1:
            compared = data.runs_compared(con)
            sections.append(_ranking_section(con, baseline, rank_by))
            sections += [
                Section("runs_compared", "Runs side by side",
                         "Every run in this database, e.g. one trace under different scheduling "
                         "profiles. Partial placement (gang wait) is GPU-hours held by partially "
                         "placed gangs: the waste that gang scheduling removes.",
                         compared, charts.runs_compared_chart, window=WHOLE_RUN),
                Section("runs_waits", "Waits and preemptions per run",
                         "Wait from submission to the first running pod.",
                         data.runs_waits(con), window=WHOLE_RUN),
            ]
        sections += [
            Section("spend_by_team", "Spend by team",
                     "Effective cost of GPU-hours held by each team's workloads.",
                     data.spend_by_team(con, filters), charts.spend_by_team_chart),
            Section("usage_class_over_time", f"GPU-hours by usage class per {bucket}",
                     "Productive: running; partial placement (gang wait): held by a gang still "
                     "waiting for its last pods; lost to preemption: work since the last "
                     "checkpoint of a preempted pod; idle: held by nobody.",
                     data.usage_class_over_time(con, filters, bucket),
                     charts.usage_class_over_time_chart),
            Section("chargeback", "Chargeback per team",
                     "What each team is charged: its own usage plus the idle capacity of the "
                     "charge periods and GPU models it used, in proportion to its cost there; "
                     "idle nobody could carry stays on the "
                     f"platform line, {labels.PLATFORM_LINE}.",
                     data.team_showback(con, filters, data.CHARGEBACK_POLICY), charts.team_chargeback_chart),
            *([_label_section(con, filters, label_key)] if label_key else []),
            Section("idle_cost_by_cause", "Idle and partial-placement cost by cause",
                     "Idle GPU-hours by cause, and the GPU-hours held by partially placed gangs "
                     "(partial placement). Idle capacity belongs to no team.",
                     data.idle_cost_by_cause(con, filters), charts.idle_cost_by_cause_chart),
            Section("idle_avoidable_or_sunk", "Idle cost: avoidable or sunk",
                     "Idle on nodes paid by the hour could be given back (avoidable); idle on "
                     "Committed nodes is paid whatever happens (sunk).",
                     data.idle_by_payment(con, filters), finops_charts.idle_by_payment_chart),
            Section("commitment_pools", "Commitment pools",
                     "Whole run: committed capacity pooled per SKU, per month. Utilization = committed "
                     "hours used ÷ committed hours; coverage = covered usage ÷ commitment-eligible "
                     "usage (committed hours used ÷ those and on-demand hours used; spot is not "
                     "eligible); and the on-demand hours the unused part could have carried.",
                     data.commitment_pools(con, filters.run_id),
                     window="the run's whole billing months (every phase; the date and phase filters do not apply)"),
            Section("unservable_demand", "Unservable demand",
                     "Workloads that can never run on this cluster and its quotas, per team and "
                     "reason: GPU-hours asked. Not demand for idle causes.",
                     data.unservable_demand(con, filters), finops_charts.unservable_demand_chart,
                     window="workloads submitted before the selection's end; GPU-hours asked and waited over "
                            "the whole run"),
            Section("pending_demand", "GPU-hours demanded while pending",
                     "GPU-hours each team's workloads demanded while they waited to run, capped "
                     "by what the cluster could have run, valued at list price: demand, not "
                     "spend.",
                     data.waiting_cost_by_team(con, filters), finops_charts.waiting_cost_chart),
            Section("checkpoint_loss", "Checkpoint loss per eviction",
                     "Work since the last checkpoint each eviction threw away, per victim team; "
                     "reclaim: another queue took the GPUs back.",
                     data.eviction_losses(con, filters), finops_charts.eviction_losses_chart),
            costliest_chains_section(con, filters),
            Section("cost_per_training_run", "Cost per training run",
                     "Training and fine-tune runs by outcome at the window's end: each run's usage in the "
                     "window plus the idle it carries there (its share of the idle of the hours and GPU "
                     "models it used, the chargeback's window policy).",
                     data.training_run_costs(con, filters), finops_charts.training_run_costs_chart),
            Section("costliest_workloads", "Costliest workloads",
                     "From the FOCUS cost records in the window.",
                     data.costliest_workloads(con, filters, limit=20),
                     charts.costliest_workloads_chart),
            Section("partial_placement_workloads", "Partially placed gangs",
                     "Workloads that held GPUs while their gang was incomplete.",
                     data.partial_placement_workloads(con, filters)),
            Section("pending_by_reason", "Waiting workloads by latest reason",
                     "Workloads still waiting at the end of the window.",
                     data.pending_by_reason(pending), charts.pending_by_reason_chart),
            Section("pending_workloads", "Waiting workloads",
                     "Each waiting workload with its latest pending reason.", pending),
        ]
        sections += _advice_sections(con)
        if budgets is not None:
            sections += budget_sections(con, filters.run_id, budgets, filters.date_to or date.today(),
                                        cost_centre_label)
    finally:
        con.close()
    for section in sections:  # once, for every format and chart: no control character survives
        if section.slug not in SECTIONS:  # a scheduled report would then refuse its own folder
            raise AssertionError(f"report section {section.slug!r} is missing from SECTIONS")
        section.table = printable_frame(section.table)
        _drop_chart_past_row_cap(section)
    teams = ", ".join(filters.tenants) if filters.tenants else "all teams"
    scope = printable(f"run {filters.run_id}, {window}, {teams}")
    selected = printable(f"the report's selection: {window}")
    for section in sections:
        section.window = section.window or selected
    return metrics, sections, scope


def _drop_chart_past_row_cap(section: Section) -> None:
    """A chart whose data would pass altair's row cap (5,000) is left out, with a note saying
    so: the table keeps every row. The charts of names (teams, label values, budgets) sum or
    cap their bars themselves and never reach it."""
    if section.chart is None or section.table.empty:
        return
    try:
        section.chart(section.table).to_dict()
    except alt.MaxRowsError:
        section.chart = None
        section.note += f" No chart: {len(section.table):,} rows are more than a chart draws; the table has each."


def printable_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names have no control character left
    (`dashboards.text.printable`); numbers, dates and missing values stay as they are."""
    safe = df.copy()
    for column in safe.columns:
        values = safe[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            safe[column] = values.map(printable_value).astype(values.dtype if values.dtype != object else object)
    safe.columns = [printable(str(c)) for c in safe.columns]
    return safe


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def write_report(
    db: Path,
    out_dir: Path,
    date_from: date | None = None,
    date_to: date | None = None,
    formats: tuple[str, ...] = ("html", "csv"),
    run_id: str | None = None,
    team: str | None = None,
    baseline: str | None = None,
    rank_by: str = data.DEFAULT_RANK_BY,
    phase: str | None = data.DEFAULT_PHASE,
    budgets: Path | None = None,
    group_by: str | None = None,
    cost_centre_label: str | None = None,
) -> list[Path]:
    """Write the report for ``run_id`` (default: the latest run) and return the files written.

    A database of several runs (a sweep) gets a first section ranking every run by ``rank_by``
    against ``baseline`` (default: the report's run).

    ``formats``: any of html (index.html), csv (one file per table), md (report.md),
    png (one file per chart). Dates are inclusive UTC days; None means the run's bounds.
    ``team``: one team's report (its spend, workloads and waits; idle capacity is the
    cluster's and stays in the headline); None for all teams. ``phase``: the run phase
    (steady by default, warmup, drain; None for the whole run), intersected with the dates; a
    database built before run phases has none and gets the whole run. ``budgets``: a budgets
    file (`dashboards.budgets`): sections budget_burn and budget_anomalies, to the window's end.
    ``group_by``: ``label:<key>`` adds the chargeback by that pod label (section
    chargeback_by_label); ``team`` or None, the team sections only. ``cost_centre_label``: the
    pod label whose values are the budgets' cost centres (default: cost-center, else
    cost_center, where the run carries one).
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise DashboardError(
            f"unknown report format(s) {', '.join(unknown) or '(none)'}: use {', '.join(FORMATS)}"
        )
    if date_from and date_to and date_from > date_to:
        raise DashboardError(f"--from {date_from} is after --to {date_to}")
    db = data.require_db(db)
    con = data.connect_read_only(db)
    try:
        runs = data.list_runs(con)
        if runs.empty:
            raise DashboardError(f"database {db} holds no run")
        if run_id is None:
            run_id = str(runs["run_id"].iloc[0])
        elif run_id not in set(runs["run_id"]):
            raise DashboardError(f"run {run_id!r} is not in {db}")
        run_range = data.run_date_range(con, run_id)
        if baseline is not None and baseline not in set(runs["run_id"]):
            raise DashboardError(f"baseline {baseline!r} is not in {db}")
        if rank_by not in {m[0] for m in data.RANKING_METRICS}:
            raise DashboardError(f"cannot rank by {rank_by!r}: use one of "
                                 f"{', '.join(m[0] for m in data.RANKING_METRICS)}")
        if team is not None and team not in data.list_tenants(con, run_id):
            known = ", ".join(data.list_tenants(con, run_id)) or "(none)"
            raise DashboardError(f"team {team!r} has no workloads in run {run_id}; known: {known}")
        windows = data.run_phases(con, run_id)
        label_key = data.GroupBy.parse(group_by).label_key if group_by else None
        if label_key is not None:
            data.check_label_key(con, run_id, label_key)
        if cost_centre_label is not None:
            if budgets is None:
                raise DashboardError("--cost-centre-label needs --budgets (it names the budgets' cost centres)")
            data.check_label_key(con, run_id, cost_centre_label)
    finally:
        con.close()
    if run_range is not None:
        date_from = date_from or run_range[0]
        date_to = date_to or run_range[1]
    filters = data.Filters(run_id, date_from, date_to, (team,) if team else ())
    if phase is not None and windows:
        filters = replace(filters, phase=phase, phase_window=data.phase_window(windows, phase))
    metrics, sections, scope = _collect(db, filters, baseline, rank_by, budgets, label_key, cost_centre_label)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")

    # Render everything first, in memory: a failure here leaves nothing on disk.
    files: list[tuple[str, bytes]] = []
    if "html" in formats:
        files.append(("index.html",
                      render_html(metrics, sections, scope, generated).encode("utf-8")))
    if "csv" in formats:
        headline = pd.DataFrame(headline_rows(metrics), columns=["metric", "value"])
        files.append(("headline.csv", neutralise_csv_frame(headline).to_csv(index=False).encode()))
        for section in sections:
            csv_text = neutralise_csv_frame(cells.csv_rounded(labels.csv_frame(section.table))).to_csv(index=False)
            files.append((f"{section.slug}.csv", csv_text.encode("utf-8")))
    if "md" in formats:
        files.append(("report.md",
                      render_markdown(metrics, sections, scope, generated).encode("utf-8")))
    if "png" in formats:
        for section in sections:
            if section.chart is not None and not section.table.empty:
                files.append((f"{section.slug}.png", png(section.chart(section.table))))
    return _write_atomically(Path(out_dir), files, inputs=(Path(db),))


def _write_atomically(out_dir: Path, files: list[tuple[str, bytes]], inputs: tuple[Path, ...] = ()) -> list[Path]:
    """Write every file into ``out_dir`` under the write discipline
    (`scheduler.eventlog.writes.write_files`): each file swapped in from a temporary sibling,
    never over a file of the user's (one the folder's manifest does not list with its hash),
    never over the database read. Files of other formats an earlier report wrote stay."""
    targets = [safe_output_path(out_dir, name) for name, _ in files]  # refuse before writing
    wanted = dict(files)
    try:
        write_files(out_dir, wanted, inputs=inputs, what="the report folder")
    except NotOurs as refused:
        raise DashboardError(str(refused)) from None
    return targets
