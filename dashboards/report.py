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

import base64
import html
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from dashboards import charts, data
from dashboards.errors import DashboardError
from dashboards.text import markdown_text, printable, printable_value

FORMATS = ("html", "csv", "md", "png")
SECTIONS = (
    "runs_compared", "runs_waits", "spend_by_team", "usage_class_over_time", "idle_cost_by_cause",
    "costliest_workloads", "partial_placement_workloads", "pending_by_reason", "pending_workloads",
)
"""Every section's slug: the stem of its CSV and PNG files."""


def report_file_names() -> frozenset[str]:
    """Every file name a report may write (to tell a report folder from a user's folder)."""
    return frozenset({"index.html", "report.md", "headline.csv"}
                     | {f"{slug}.{ext}" for slug in SECTIONS for ext in ("csv", "png")})
# Characters that make a spreadsheet treat a cell as a formula (OWASP "CSV injection").
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


# --------------------------------------------------------------------------------------------
# Safety helpers (shared with the dashboard's CSV downloads)
# --------------------------------------------------------------------------------------------


def neutralise_csv_value(value: Any) -> Any:
    """Prefix text that a spreadsheet would run as a formula with a single quote.

    A carriage return becomes a line feed first: CSV writers quote a value with a line feed
    but not one with a lone carriage return, which a spreadsheet reads as a new row, so
    ``"x\r=cmd|…"`` would start a row with a formula.
    """
    if isinstance(value, str):
        if "\r" in value:
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        value = printable(value, keep="\n\t")  # an escape sequence would run when the file is cat'ed
        if value.startswith(_FORMULA_PREFIXES):
            return "'" + value
    return value


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


@dataclass
class _Section:
    """One table of the report, with its chart when it has one."""

    slug: str  # file name stem of the CSV / PNG
    title: str
    note: str
    table: pd.DataFrame
    chart: Callable[[pd.DataFrame], alt.Chart] | None = None


def _collect(db: Path, filters: data.Filters) -> tuple[dict[str, float], list[_Section], str]:
    con = data.connect_read_only(db)
    try:
        run_range = data.run_date_range(con, filters.run_id)
        bucket = data.pick_time_bucket(filters, run_range)
        metrics = data.headline_metrics(con, filters)
        pending = data.pending_workloads(con, filters)
        sections = []
        if len(data.list_runs(con)) > 1:
            compared = data.runs_compared(con)
            sections += [
                _Section("runs_compared", "Runs side by side",
                         "Every run in this database, e.g. one trace under different scheduling "
                         "profiles. gang_wait is GPU-hours held by partially placed gangs: the "
                         "waste that gang scheduling removes.",
                         compared, charts.runs_compared_chart),
                _Section("runs_waits", "Waits and preemptions per run",
                         "Wait from submission to the first running pod, in seconds.",
                         data.runs_waits(con)),
            ]
        sections += [
            _Section("spend_by_team", "Spend by team",
                     "Effective cost of GPU-hours held by each team's workloads.",
                     data.spend_by_team(con, filters), charts.spend_by_team_chart),
            _Section("usage_class_over_time", f"GPU-hours by usage class per {bucket}",
                     "productive: running; gang_wait: held by a gang still waiting for its last "
                     "pods (partial placement); lost_to_preemption: work since the last "
                     "checkpoint of a preempted pod; idle: held by nobody.",
                     data.usage_class_over_time(con, filters, bucket),
                     charts.usage_class_over_time_chart),
            _Section("idle_cost_by_cause", "Idle and partial-placement cost by cause",
                     "Idle GPU-hours by cause, and the GPU-hours held by partially placed gangs "
                     "(usage class gang_wait). Idle capacity belongs to no team.",
                     data.idle_cost_by_cause(con, filters), charts.idle_cost_by_cause_chart),
            _Section("costliest_workloads", "Costliest workloads",
                     "From the FOCUS cost records in the window.",
                     data.costliest_workloads(con, filters, limit=20),
                     charts.costliest_workloads_chart),
            _Section("partial_placement_workloads", "Partially placed gangs",
                     "Workloads that held GPUs while their gang was incomplete.",
                     data.partial_placement_workloads(con, filters)),
            _Section("pending_by_reason", "Waiting workloads by latest reason",
                     "Workloads still waiting at the end of the window.",
                     data.pending_by_reason(pending), charts.pending_by_reason_chart),
            _Section("pending_workloads", "Waiting workloads",
                     "Each waiting workload with its latest pending reason.", pending),
        ]
    finally:
        con.close()
    for section in sections:  # once, for every format and chart: no control character survives
        section.table = printable_frame(section.table)
    teams = ", ".join(filters.tenants) if filters.tenants else "all teams"
    scope = printable(f"run {filters.run_id}, {filters.date_from} to {filters.date_to} (UTC), {teams}")
    return metrics, sections, scope


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


def _headline_rows(metrics: dict[str, float]) -> list[tuple[str, str]]:
    return [
        ("Total cost", f"${metrics['total_cost']:,.2f}"),
        ("List cost", f"${metrics['list_cost']:,.2f}"),
        ("Capacity", f"{metrics['capacity_gpu_hours']:,.1f} GPU-hours"),
        ("Allocation rate", f"{metrics['allocation_rate']:.1%}"),
        ("Idle", f"{metrics['idle_pct']:.1%} ({metrics['idle_gpu_hours']:,.1f} GPU-hours)"),
        ("Idle cost", f"${metrics['idle_cost']:,.2f}"),
        ("Partial-placement GPU-hours (gang_wait)",
         f"{metrics['partial_placement_gpu_hours']:,.1f} (${metrics['partial_placement_cost']:,.2f})"),
        ("Lost to preemption", f"{metrics['lost_to_preemption_gpu_hours']:,.1f} GPU-hours"),
    ]


def _svg(chart: alt.Chart) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(chart.to_dict())


def _png(chart: alt.Chart) -> bytes:
    import vl_convert

    return vl_convert.vegalite_to_png(chart.to_dict(), scale=2)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#212121}
h1{margin-bottom:.2rem} .scope{color:#616161;margin-top:0}
.cards{display:flex;flex-wrap:wrap;gap:.75rem;margin:1rem 0}
.card{border:1px solid #e0e0e0;border-radius:8px;padding:.6rem .9rem;min-width:12rem}
.card .label{font-size:.8rem;color:#616161} .card .value{font-size:1.25rem;font-weight:600}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1.5rem}
th,td{border:1px solid #e0e0e0;padding:.25rem .5rem;text-align:left}
th{background:#f5f5f5} img.chart{max-width:100%;height:auto;display:block;margin:.5rem 0}
.note{color:#616161;font-size:.9rem} .empty{color:#9e9e9e;font-style:italic}
"""


def _render_html(metrics: dict[str, float], sections: list[_Section], scope: str,
                 generated: str) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Nothing from the network: the page must open offline, e.g. from a mail attachment.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "img-src data:; style-src 'unsafe-inline'\">",
        f"<title>gpu-finops report: {esc(scope)}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>GPU cost report</h1>",
        f'<p class="scope">{esc(scope)} · generated {esc(generated)}</p>',
        '<div class="cards">',
    ]
    for label, value in _headline_rows(metrics):
        parts.append(f'<div class="card"><div class="label">{esc(label)}</div>'
                     f'<div class="value">{esc(value)}</div></div>')
    parts.append("</div>")
    for section in sections:
        parts.append(f'<h2 id="{esc(section.slug)}">{esc(section.title)}</h2>')
        parts.append(f'<p class="note">{esc(section.note)}</p>')
        if section.table.empty:
            parts.append('<p class="empty">No rows for this selection.</p>')
            continue
        if section.chart is not None:
            svg = _svg(section.chart(section.table))
            encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            parts.append(f'<img class="chart" alt="{esc(section.title)}" '
                         f'src="data:image/svg+xml;base64,{encoded}">')
        parts.append(section.table.to_html(index=False, escape=True, border=0,
                                           na_rep="", float_format=lambda v: f"{v:,.2f}"))
    parts.append("</body></html>")
    return "\n".join(parts)


def _markdown_cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    return markdown_text(str(value))


def _markdown_table(df: pd.DataFrame) -> str:
    header = "| " + " | ".join(_markdown_cell(c) for c in df.columns) + " |"
    rule = "| " + " | ".join("---" for _ in df.columns) + " |"
    rows = ["| " + " | ".join(_markdown_cell(v) for v in row) + " |"
            for row in df.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def _render_markdown(metrics: dict[str, float], sections: list[_Section], scope: str,
                     generated: str) -> str:
    lines = ["# GPU cost report", "", f"{markdown_text(scope)} · generated {generated}", ""]
    lines += [f"- **{label}**: {value}" for label, value in _headline_rows(metrics)]
    for section in sections:
        lines += ["", f"## {section.title}", "", section.note, ""]
        lines.append(_markdown_table(section.table) if not section.table.empty
                     else "_No rows for this selection._")
    return "\n".join(lines) + "\n"


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
) -> list[Path]:
    """Write the report for ``run_id`` (default: the latest run) and return the files written.

    ``formats``: any of html (index.html), csv (one file per table), md (report.md),
    png (one file per chart). Dates are inclusive UTC days; None means the run's bounds.
    ``team``: one team's report (its spend, workloads and waits; idle capacity is the
    cluster's and stays in the headline); None for all teams.
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
        if team is not None and team not in data.list_tenants(con, run_id):
            known = ", ".join(data.list_tenants(con, run_id)) or "(none)"
            raise DashboardError(f"team {team!r} has no workloads in run {run_id}; known: {known}")
    finally:
        con.close()
    if run_range is not None:
        date_from = date_from or run_range[0]
        date_to = date_to or run_range[1]
    filters = data.Filters(run_id, date_from, date_to, (team,) if team else ())
    metrics, sections, scope = _collect(db, filters)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")

    # Render everything first, in memory: a failure here leaves nothing on disk.
    files: list[tuple[str, bytes]] = []
    if "html" in formats:
        files.append(("index.html",
                      _render_html(metrics, sections, scope, generated).encode("utf-8")))
    if "csv" in formats:
        headline = pd.DataFrame(_headline_rows(metrics), columns=["metric", "value"])
        files.append(("headline.csv", neutralise_csv_frame(headline).to_csv(index=False).encode()))
        for section in sections:
            csv_text = neutralise_csv_frame(section.table).to_csv(index=False)
            files.append((f"{section.slug}.csv", csv_text.encode("utf-8")))
    if "md" in formats:
        files.append(("report.md",
                      _render_markdown(metrics, sections, scope, generated).encode("utf-8")))
    if "png" in formats:
        for section in sections:
            if section.chart is not None and not section.table.empty:
                files.append((f"{section.slug}.png", _png(section.chart(section.table))))
    return _write_atomically(Path(out_dir), files)


def _write_atomically(out_dir: Path, files: list[tuple[str, bytes]]) -> list[Path]:
    """Write every file to a temp folder in ``out_dir``, then rename each into place."""
    targets = [safe_output_path(out_dir, name) for name, _ in files]  # refuse before writing
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DashboardError(f"cannot create report folder {out_dir}: {exc.strerror}") from exc
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
    try:
        for (name, payload), target in zip(files, targets, strict=True):
            staged = staging / name
            with open(staged, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            # os.replace swaps the name itself: a symlink planted at the target is replaced,
            # never followed to a file outside out_dir.
            os.replace(staged, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return targets
