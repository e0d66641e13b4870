"""Scenarios: two runs side by side (one trace under two scheduling profiles, say): cost, idle,
waits, per team."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboards import cache, charts, ui
from dashboards.text import markdown_text as md

db, filters = cache.current()
runs = cache.query(db, "list_runs")

st.title("Scenarios side by side")

others = [r for r in runs["run_id"].tolist() if r != filters.run_id]
if not others:
    st.info("This database holds one run. Replay the same trace under another profile (e.g. "
            "`--profile kube-default`) and build both runs into this database to compare them.",
            icon=":material/compare_arrows:")
    st.stop()
profiles = dict(zip(runs["run_id"], runs["profile"], strict=True))
other = st.selectbox("Compare the sidebar's run with", others, key=f"scenarios.other.{filters.run_id}",
                     format_func=lambda r: f"{r} ({profiles.get(r)})")
# Whole runs unless the dates were narrowed: runs of one trace under two profiles last different
# times (a run ends when its last pod does), and runs of two traces need not overlap at all.
run_range = cache.query(db, "run_date_range", filters.run_id)
whole_runs = run_range is None or (filters.date_from, filters.date_to) == tuple(run_range)
if whole_runs:
    filters = replace(filters, date_from=None, date_to=None)
teams = ", ".join(md(t) for t in filters.tenants) if filters.tenants else "all teams"
models = ", ".join(md(m) for m in filters.gpu_models) if filters.gpu_models else "all GPU models"
dates = ("whole runs" if whole_runs
         else f"{filters.date_from} to {filters.date_to} (UTC) in both runs")
st.caption(f"Baseline {md(filters.run_id)} ({md(profiles.get(filters.run_id))}) vs scenario {md(other)} "
           f"({md(profiles.get(other))}) · {dates} · {teams} · {models}")

compared = cache.query(db, "scenario_compare", filters, other)


def _shown(value: float, unit: str) -> str:
    if unit == "usd":
        return ui.compact_usd(value)
    if unit == "pct":
        return f"{value:.1%}"
    if unit == "h":
        return f"{value:,.1f} h"
    if unit == "hours":
        return ui.compact_number(value, " GPU-h")
    return f"{value:,.0f}"


def _change(row: pd.Series) -> str | None:
    unit, change = row["unit"], float(row["change"])
    if abs(change) < 1e-9 * max(1.0, abs(float(row["baseline"]))):
        return None  # the same: no arrow for float dust
    if unit == "pct":
        return f"{change * 100:+.1f} pts"
    return ("+" if change >= 0 else "-") + _shown(abs(change), unit)


# Five headline numbers: what the scenario changes, green when it is better.
better_when_higher = {"Allocation rate", "Finished workloads"}
cards = compared[compared["metric"].isin(
    ["Total cost", "Idle cost", "Partial placement (gang_wait) GPU-hours", "p95 wait",
     "Allocation rate"])]
for column, (_, row) in zip(st.columns(len(cards)), cards.iterrows(), strict=True):
    column.metric(
        str(row["metric"]).replace(" (gang_wait) GPU-hours", ""), _shown(row["scenario"], row["unit"]),
        _change(row), delta_color="normal" if row["metric"] in better_when_higher else "inverse",
        help=f"{other}: {_shown(row['scenario'], row['unit'])}; {filters.run_id}: "
             f"{_shown(row['baseline'], row['unit'])}",
    )

usage = cache.query(db, "scenario_usage", filters, other)
by_team = cache.query(db, "scenario_by_team", filters, other)
left, right = st.columns(2)
with left:
    cache.chart(charts.runs_compared_chart(usage, height=170))
with right:
    cache.chart(charts.scenario_by_team_chart(by_team, "effective_cost", "Cost per team"))

left, right = st.columns(2)
with left:
    waits = by_team.dropna(subset=["p95_wait_h"])
    cache.chart(charts.scenario_by_team_chart(waits, "p95_wait_h", "p95 wait per team (hours)",
                                              height=200))
with right:
    table = compared.assign(
        baseline=[_shown(v, u) for v, u in zip(compared["baseline"], compared["unit"], strict=True)],
        scenario=[_shown(v, u) for v, u in zip(compared["scenario"], compared["unit"], strict=True)],
        change=[_change(r) or "same" for _, r in compared.iterrows()],
    ).drop(columns=["unit"])
    cache.table(table.rename(columns={"baseline": filters.run_id, "scenario": other}))
    cache.csv_download(compared, "scenario_metrics.csv", key="scenarios.metrics.csv")

st.subheader("Per team")
ui.table_with_csv(by_team, "scenario_by_team.csv", key="scenarios.by_team.csv")
with st.expander("GPU-hours by usage class per run: table"):
    ui.table_with_csv(usage, "scenario_usage.csv", key="scenarios.usage.csv")
