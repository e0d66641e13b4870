"""Scenarios: any number of runs (a sweep's scenarios, one trace under several profiles)
ranked against a baseline the user picks; then the baseline and one scenario side by side,
per team."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboards import cache, charts, data, scenario_charts, ui
from dashboards.text import markdown_text as md

db, filters = cache.current()
runs = cache.query(db, data.scenario_runs)

st.title("Scenarios ranked")

if len(runs) < 2:
    st.info("This database holds one run. Replay the same trace under another profile (e.g. "
            "`--profile kube-default`) and build both runs into this database to compare them, or run "
            "`gpu-finops sweep` over many scenarios.", icon=":material/compare_arrows:")
    st.stop()
# A run phase is a window of the sidebar's run only (the other runs' phases differ): runs are
# compared whole, or over the dates chosen, never over one run's phase.
filters = replace(filters, phase=None, phase_window=None)

names = {r.run_id: (r.scenario if isinstance(r.scenario, str) and r.scenario else r.run_id)
         for r in runs.itertuples()}
profiles = dict(zip(runs["run_id"], runs["profile"], strict=True))
run_ids = runs["run_id"].tolist()
metrics = {key: (label, unit, higher) for key, label, unit, higher in data.RANKING_METRICS}

left, middle, right = st.columns([3, 2, 2])
chosen = left.multiselect("Runs compared", run_ids, default=run_ids, key="scenarios.runs",
                          format_func=lambda r: f"{names[r]} ({profiles[r]})", placeholder="Pick two or more runs")
if len(chosen) < 2:
    st.info("Pick at least two runs to rank.", icon=":material/compare_arrows:")
    st.stop()
# A link may name the baseline (/scenarios?baseline=RUN); else the named baseline scenario.
linked_baseline = st.query_params.get("baseline")
default_baseline = linked_baseline if linked_baseline in chosen else \
    cache.query(db, data.default_baseline, tuple(chosen))
baseline = middle.selectbox("Baseline", chosen, index=chosen.index(default_baseline),
                            key="scenarios.baseline", format_func=lambda r: names[r],
                            help="Default: the sweep file's [sweep] baseline, else the first run of "
                                 "the default scheduler (kube-default), without Kueue if there is one.")
rank_by = right.selectbox("Rank by", list(metrics), key="scenarios.rank_by", format_func=lambda k: metrics[k][0],
                          index=list(metrics).index(data.DEFAULT_RANK_BY),
                          help="Outcome per cost by default: on a fixed cluster total cost is capacity × "
                               "duration, so it rewards the run that ended first.")
window = st.radio("Hours compared", data.WINDOWS, horizontal=True, key="scenarios.window",
                  index=list(data.WINDOWS).index(data.DEFAULT_WINDOW),
                  format_func=lambda w: {"whole": "whole runs (each until its last pod ends)",
                                         "common": "only the hours every compared run covers"}[w])

if cache.query(db, data.effective_window, tuple(chosen), window) != window:
    st.caption("These runs have no hour in common (different traces or calendars): compared whole.")
ranking = cache.query(db, data.scenario_ranking, tuple(chosen), baseline, rank_by, window)
breakdown = cache.query(db, data.scenario_cost_breakdown, tuple(chosen), window)
label, unit, higher = metrics[rank_by]


def _shown(value: float, unit: str) -> str:
    if pd.isna(value):
        return "–"
    if unit == "usd":
        return ui.compact_usd(value)
    if unit == "pct":
        return f"{value:.1%}"
    if unit == "h":
        return f"{value:,.1f} h"
    if unit == "hours":
        return ui.compact_number(value, " GPU-h")
    return f"{value:,.0f}"


def _signed(value: float, unit: str) -> str:
    if pd.isna(value):
        return "–"
    if abs(value) < 1e-9:
        return "same"
    return ("+" if value > 0 else "-") + _shown(abs(value), unit)


best, base_row = ranking.iloc[0], ranking[ranking["is_baseline"]].iloc[0]
cards = st.columns(3)
with cards[0]:
    st.metric(f"Best by {(label[:1].lower() + label[1:])}", _shown(best[rank_by], unit), help=f"{md(best['run_id'])} "
              f"({md(profiles[best['run_id']])})")
    st.caption(f"**{md(names[best['run_id']])}**")
with cards[1]:
    st.metric("Baseline", _shown(base_row[rank_by], unit), help=f"{md(baseline)} ({md(profiles[baseline])})")
    st.caption(f"**{md(names[baseline])}**, rank {int(base_row['rank'])} of {len(ranking)}")
with cards[2]:
    st.metric("Best against the baseline", _signed(best[rank_by] - base_row[rank_by], unit),
              help="the best scenario's value minus the baseline's")
    st.caption(f"worst: {_signed(ranking.iloc[-1][rank_by] - base_row[rank_by], unit)} "
               f"({md(names[ranking.iloc[-1]['run_id']])})")

st.markdown(md(data.why_the_winner_wins(ranking.assign(scenario=ranking["run_id"].map(names)), rank_by)))
cache.chart(scenario_charts.scenario_ranking_chart(breakdown, ranking))

shown = ranking.assign(scenario=ranking["run_id"].map(names))
columns = ["rank", "scenario", "profile", "queues", "scoring", "preemption", "seed",
           "cost_per_productive_gpu_hour", "cost_per_finished_workload", "total_cost",
           "total_cost_vs_baseline", "total_cost_vs_baseline_pct", "waste_cost", "idle_fragmentation_gpu_hours",
           "idle_quota_gpu_hours", "idle_gang_barrier_gpu_hours", "idle_no_demand_gpu_hours",
           "partial_placement_gpu_hours", "lost_gpu_hours", "preemption_waste_cost", "preemptions", "mean_wait_h",
           "p95_wait_h", "finished", "run_id"]
table = shown[[c for c in columns if c in shown]].rename(columns={
    "cost_per_productive_gpu_hour": "$ per productive GPU-h", "cost_per_finished_workload": "$ per finished workload",
    "total_cost": "total cost $", "total_cost_vs_baseline": "vs baseline $", "total_cost_vs_baseline_pct":
    "vs baseline %", "waste_cost": "waste $", "idle_fragmentation_gpu_hours": "idle frag. GPU-h",
    "idle_quota_gpu_hours": "idle quota GPU-h", "idle_gang_barrier_gpu_hours": "idle gang barrier GPU-h",
    "idle_no_demand_gpu_hours": "idle no demand GPU-h", "partial_placement_gpu_hours": "partial placement GPU-h",
    "lost_gpu_hours": "lost to preemption GPU-h", "preemption_waste_cost": "preemption waste $",
    "mean_wait_h": "mean wait h", "p95_wait_h": "p95 wait h"})
if "vs baseline %" in table:
    table["vs baseline %"] = table["vs baseline %"] * 100
st.caption(f"Ranked by {(label[:1].lower() + label[1:])} ({'higher' if higher else 'lower'} is better) against "
           f"{md(names[baseline])}. Idle GPU-hours by cause; with the common window, finished work and "
           "waits are those of the hours compared.")
cache.table(table, column_config={c: st.column_config.NumberColumn(format="%.2f")
                                  for c in table.columns if table[c].dtype.kind == "f"})
cache.csv_download(ranking, "scenario_ranking.csv", key="scenarios.ranking.csv")
change_metric = rank_by if rank_by != "total_cost" else "waste_cost"
cache.chart(scenario_charts.scenario_change_chart(ranking, change_metric, metrics[change_metric][0],
                                         higher_is_better=metrics[change_metric][2]))

# ------------------------------------------------------------------------ baseline vs one scenario

st.subheader("The baseline and one scenario, per team")
others = [r for r in chosen if r != baseline]
other = st.selectbox("Scenario", others, key=f"scenarios.other.{baseline}", format_func=lambda r: names[r])
pair = replace(filters, run_id=baseline)
# Whole runs unless the dates were narrowed on the baseline's own range: runs of one trace under
# two profiles last different times, and runs of two traces need not overlap at all.
run_range = cache.query(db, data.run_date_range, baseline)
if baseline != filters.run_id or run_range is None or (filters.date_from, filters.date_to) == tuple(run_range):
    pair = replace(pair, date_from=None, date_to=None)
# The pair is compared over the hours the ranking above compares: the hours both runs cover
# when "common" is picked (the ranking's window), else whole.
common = cache.query(db, data.effective_window, (baseline, other), window) == "common"
if common:
    pair = replace(pair, phase_window=cache.query(db, data.common_window, (baseline, other)))
# Run ids, profiles, teams and models are user text: escaped, not read as Markdown.
teams = ", ".join(md(t) for t in pair.tenants) if pair.tenants else "all teams"
models = ", ".join(md(m) for m in pair.gpu_models) if pair.gpu_models else "all GPU models"
dates = "whole runs" if pair.date_from is None else f"{pair.date_from} to {pair.date_to} (UTC) in both runs"
if common:
    hours = pair.params()
    dates = f"the hours both runs cover, {hours['ts_from']:%Y-%m-%d %H:%M} to {hours['ts_to']:%Y-%m-%d %H:%M} UTC"
st.caption(f"Baseline {md(baseline)} ({md(profiles.get(baseline) or '')}) vs {md(other)} ({md(profiles.get(other) or '')}) · "
           f"{dates} · {teams} · {models}")
compared = cache.query(db, data.scenario_compare, pair, other)


def _change(row: pd.Series) -> str | None:
    unit, change = row["unit"], float(row["change"])
    if abs(change) < 1e-9 * max(1.0, abs(float(row["baseline"]))):
        return None  # the same: no arrow for float dust
    if unit == "pct":
        return f"{change * 100:+.1f} pts"
    return ("+" if change >= 0 else "-") + _shown(abs(change), unit)


better_when_higher = {"Allocation rate", "Finished workloads"}
pair_cards = compared[compared["metric"].isin(
    ["Total cost", "Idle cost", "Partial placement (gang_wait) GPU-hours", "p95 wait", "Allocation rate"])]
for column, (_, row) in zip(st.columns(len(pair_cards)), pair_cards.iterrows(), strict=True):
    column.metric(
        str(row["metric"]).replace(" (gang_wait) GPU-hours", ""), _shown(row["scenario"], row["unit"]),
        _change(row), delta_color="normal" if row["metric"] in better_when_higher else "inverse",
        help=f"{md(other)}: {_shown(row['scenario'], row['unit'])}; {md(baseline)}: {_shown(row['baseline'], row['unit'])}",
    )

by_team = cache.query(db, data.scenario_by_team, pair, other)
left, right = st.columns(2)
with left:
    cache.chart(charts.scenario_by_team_chart(by_team, "effective_cost", "Cost per team"))
with right:
    waits = by_team.dropna(subset=["p95_wait_h"])
    cache.chart(charts.scenario_by_team_chart(waits, "p95_wait_h", "p95 wait per team (hours)", height=200))
pair_table = compared.assign(
    baseline=[_shown(v, u) for v, u in zip(compared["baseline"], compared["unit"], strict=True)],
    scenario=[_shown(v, u) for v, u in zip(compared["scenario"], compared["unit"], strict=True)],
    change=[_change(r) or "same" for _, r in compared.iterrows()],
).drop(columns=["unit"])
cache.table(pair_table.rename(columns={"baseline": baseline, "scenario": other}))
cache.csv_download(compared, "scenario_metrics.csv", key="scenarios.metrics.csv")
ui.table_with_csv(by_team, "scenario_by_team.csv", key="scenarios.by_team.csv")
with st.expander("GPU-hours by usage class per run: table"):
    ui.table_with_csv(cache.query(db, data.scenario_usage, pair, other), "scenario_usage.csv",
                      key="scenarios.usage.csv")
