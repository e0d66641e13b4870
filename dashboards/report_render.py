"""The report's rendering: its sections (`Section`), the headline rows, the self-contained
HTML page (charts as SVG data URIs, nothing from the network) and the Markdown file. Every
table is shown with readable headers (`dashboards.labels.readable_table`), its window named
above it, and no missing cell rendered as "None" or "<NA>"."""

from __future__ import annotations

import base64
import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

from dashboards import labels
from dashboards.text import markdown_text


@dataclass
class Section:
    """One table of the report, with its chart when it has one."""

    slug: str  # file name stem of the CSV / PNG
    title: str
    note: str
    table: pd.DataFrame
    chart: Callable[[pd.DataFrame], alt.TopLevelMixin] | None = None
    # the hours the table covers, in words: empty for the report's selection (its phase and
    # dates, filled in by `dashboards.report._collect`), else a window of the section's own
    window: str = ""


WHOLE_RUN = "the whole run of every run in the database (every phase; the date and phase filters do not apply)"


def headline_rows(metrics: dict[str, float]) -> list[tuple[str, str]]:
    return [
        ("Total cost", f"${metrics['total_cost']:,.2f}"),
        ("List cost", f"${metrics['list_cost']:,.2f}"),
        ("Capacity", f"{metrics['capacity_gpu_hours']:,.1f} GPU-hours"),
        ("Allocation rate", f"{metrics['allocation_rate']:.1%}"),
        ("Idle", f"{metrics['idle_pct']:.1%} ({metrics['idle_gpu_hours']:,.1f} GPU-hours)"),
        ("Idle cost", f"${metrics['idle_cost']:,.2f}"),
        # inside allocations: GPUs held by running workloads whose engines were idle
        ("Allocated-idle cost", _allocated_idle(metrics)),
        ("Partial-placement GPU-hours",
         f"{metrics['partial_placement_gpu_hours']:,.1f} (${metrics['partial_placement_cost']:,.2f})"),
        ("Lost to preemption", f"{metrics['lost_to_preemption_gpu_hours']:,.1f} GPU-hours"),
        # the FinOps Foundation's two bases, named: every discount, and the commitments' part
        ("Effective savings rate over list (ESROverList: (list − effective cost) ÷ list cost)",
         f"{metrics['esr_over_list']:.1%}"),
        ("Effective savings rate over contract (ESROverContract: (contracted − effective cost) ÷ "
         "contracted cost)", f"{metrics['esr_over_contract']:.1%}"),
    ]


def _allocated_idle(metrics: dict[str, float]) -> str:
    if not metrics.get("measured_gpu_hours"):
        return "unknown (no measured GPU utilisation)"
    efficiency = metrics.get("efficiency")
    return (f"${metrics['allocated_idle_cost']:,.2f} ({metrics['allocated_idle_gpu_hours']:,.1f} GPU-hours held "
            f"with idle engines; efficiency {efficiency:.1%} of measured GPU-hours)")


def _svg(chart: alt.TopLevelMixin) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(chart.to_dict())


def png(chart: alt.TopLevelMixin) -> bytes:
    import vl_convert

    return vl_convert.vegalite_to_png(chart.to_dict(), scale=2)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#212121}
h1{margin-bottom:.2rem} .scope{color:#616161;margin-top:0}
.cards{display:flex;flex-wrap:wrap;gap:.75rem;margin:1rem 0}
.card{border:1px solid #e0e0e0;border-radius:8px;padding:.6rem .9rem;min-width:12rem}
.card .label{font-size:.8rem;color:#616161} .card .value{font-size:1.25rem;font-weight:600}
.table{overflow-x:auto;max-width:100%;margin:.5rem 0 1.5rem}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #e0e0e0;padding:.25rem .5rem;text-align:left}
th{background:#f5f5f5} img.chart{max-width:100%;height:auto;display:block;margin:.5rem 0}
.note{color:#616161;font-size:.9rem} .window{font-size:.9rem;font-weight:600;margin-bottom:0} .empty{color:#9e9e9e;font-style:italic}
"""


def render_html(metrics: dict[str, float], sections: list[Section], scope: str,
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
    for label, value in headline_rows(metrics):
        parts.append(f'<div class="card"><div class="label">{esc(label)}</div>'
                     f'<div class="value">{esc(value)}</div></div>')
    parts.append("</div>")
    for section in sections:
        parts.append(f'<h2 id="{esc(section.slug)}">{esc(section.title)}</h2>')
        parts.append(f'<p class="window">Window: {esc(section.window)}</p>')
        parts.append(f'<p class="note">{esc(section.note)}</p>')
        if section.table.empty:
            parts.append('<p class="empty">No rows for this selection.</p>')
            continue
        if section.chart is not None:
            svg = _svg(section.chart(section.table))
            encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            parts.append(f'<img class="chart" alt="{esc(section.title)}" '
                         f'src="data:image/svg+xml;base64,{encoded}">')
        # numbers are text already, written one way (labels.readable_table, dashboards/cells.py)
        # a wide table (the runs ranked) scrolls inside the page instead of running off it
        parts.append('<div class="table">' + blank_missing(labels.readable_table(section.table)).to_html(
            index=False, escape=True, border=0, na_rep="") + "</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def blank_missing(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose missing cells (None, NaN, NaT, pd.NA) in columns that are not
    plain floats are empty strings: `DataFrame.to_html`'s ``na_rep`` covers float NaN only, and
    a reader should not meet "None" or "<NA>" in a table (float columns keep their format)."""
    shown = df.copy()
    for column in shown.columns:
        if not pd.api.types.is_float_dtype(shown[column].dtype):
            values = shown[column].astype(object)
            shown[column] = values.where(values.notna(), "")
    return shown


def _markdown_cell(value: Any) -> str:
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value):
        return ""
    return markdown_text(str(value))


def _markdown_table(df: pd.DataFrame) -> str:
    header = "| " + " | ".join(_markdown_cell(c) for c in df.columns) + " |"
    rule = "| " + " | ".join("---" for _ in df.columns) + " |"
    rows = ["| " + " | ".join(_markdown_cell(v) for v in row) + " |"
            for row in df.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def render_markdown(metrics: dict[str, float], sections: list[Section], scope: str,
                     generated: str) -> str:
    lines = ["# GPU cost report", "", f"{markdown_text(scope)} · generated {generated}", ""]
    lines += [f"- **{label}**: {value}" for label, value in headline_rows(metrics)]
    for section in sections:
        lines += ["", f"## {section.title}", "", f"_Window: {markdown_text(section.window)}_", "", section.note, ""]
        lines.append(_markdown_table(labels.readable_table(section.table)) if not section.table.empty
                     else "_No rows for this selection._")
    return "\n".join(lines) + "\n"
