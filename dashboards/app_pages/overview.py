"""Overview: what the GPUs cost, who used them, and how much sat idle and why."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data, finops_charts, ui
from dashboards.ui import compact_usd

db, filters = cache.current()
run_range = cache.query(db, data.run_date_range, filters.run_id)
metrics = cache.query(db, data.headline_metrics, filters)

st.title("GPU cost overview")
ui.scope_caption(filters)

if metrics["capacity_gpu_hours"] == 0:
    st.info("No cost records for these filters. Widen the dates or clear the GPU model filter.",
            icon=":material/filter_alt_off:")
    st.stop()

total, alloc, idle_pct, idle_cost, partial, esr = st.columns(6)
total.metric("Total cost", compact_usd(metrics["total_cost"]),
             help=f"${metrics['total_cost']:,.2f}: effective cost of the selection (idle "
                  "capacity included when no team is selected).")
alloc.metric("Allocation rate", f"{metrics['allocation_rate']:.1%}",
             help="Share of the cluster's GPU-hours held by a workload (date and GPU model "
                  "filters).")
idle_pct.metric("Idle", f"{metrics['idle_pct']:.1%}",
                help="Share of the cluster's GPU-hours that nobody held.")
idle_cost.metric("Idle cost", compact_usd(metrics["idle_cost"]),
                 help=f"${metrics['idle_cost']:,.2f}: what the idle GPU-hours cost. Idle "
                      "capacity belongs to no team.")
partial.metric("Partial placement", ui.compact_number(metrics["partial_placement_gpu_hours"], " GPU-h"),
               help="GPU-hours held by gangs waiting for their last pods: held, so not idle, "
                    "but no work done.")
saving = cache.query(db, data.savings, filters)
esr.metric("ESR list / contract", f"{saving['esr_over_list']:.1%} / {saving['esr_over_contract']:.1%}",
           help=f"Effective savings rate. Over list (the FinOps Foundation's ESROverList): (list cost of the capacity paid "
                f"${saving['list_cost']:,.0f} − its effective cost ${saving['effective_cost']:,.0f}) ÷ that "
                f"list cost. Over contract (ESROverContract): (contracted cost ${saving['contracted_cost']:,.0f} "
                "− effective cost) ÷ contracted cost, the commitments' part. Idle included. Committed "
                f"capacity left unused: ${saving['unused_commitment_cost']:,.0f} of the effective cost.")
if filters.tenants:
    st.caption("Idle capacity belongs to no team: allocation rate, idle % and idle cost describe "
               "the whole cluster for these dates and GPU models.")

spend = cache.query(db, data.spend_by_team, filters)
team_parts = [(str(t), float(c)) for t, c in zip(spend["tenant"], spend["effective_cost"], strict=True)]
ui.reconciliation(team_parts + ([] if filters.tenants else [(data.IDLE_TENANT, metrics["idle_cost"])]),
                  "total cost", metrics["total_cost"])

left, right = st.columns(2)
with left:
    if spend.empty:
        st.info("No team used GPUs in this selection.")
    else:
        cache.chart(charts.spend_by_team_chart(spend))
        with st.expander("Spend by team: table"):
            ui.table_with_csv(spend, "spend_by_team.csv", key="overview.spend.csv")
with right:
    idle = cache.query(db, data.idle_cost_by_cause, filters)
    if idle.empty:
        st.info("No idle or partially placed GPU-hours in this selection.")
    else:
        cache.chart(charts.idle_cost_by_cause_chart(idle))
        with st.expander("Idle cost by cause: table"):
            ui.table_with_csv(idle, "idle_cost_by_cause.csv", key="overview.idle.csv")

bucket = data.pick_time_bucket(filters, run_range)
usage = cache.query(db, data.usage_class_over_time, filters, bucket)
if usage.empty:
    st.info("No GPU-hours to plot for this selection.")
else:
    cache.chart(charts.usage_class_over_time_chart(usage, height=240))
    with st.expander(f"GPU-hours by usage class per {bucket}: table"):
        ui.table_with_csv(usage, "usage_class_over_time.csv", key="overview.usage.csv")

costliest = cache.query(db, data.costliest_workloads, filters)
if costliest.empty:
    st.info("No workload held GPUs in this selection.")
else:
    cache.chart(charts.costliest_workloads_chart(costliest, height=260))
    ui.table_with_csv(costliest, "costliest_workloads.csv", key="overview.costliest.csv")

st.subheader("Partially placed gangs")
partial_rows = cache.query(db, data.partial_placement_workloads, filters)
if partial_rows.empty:
    st.info("No gang held GPUs while incomplete in this selection.")
else:
    ui.reconciliation([(f"{len(partial_rows):,} gangs", float(partial_rows["gang_wait_gpu_hours"].sum()))],
                      "partial placement", metrics["partial_placement_gpu_hours"], unit="gpu_hours")
    ui.table_with_csv(partial_rows, "partial_placement_workloads.csv", key="overview.partial.csv")

st.subheader("Cost per training run")
training = cache.query(db, data.training_run_costs, filters)
if training.empty:
    st.info("No training run in this selection.")
else:
    chart_col, table_col = st.columns([1, 1])
    with chart_col:
        cache.chart(finops_charts.training_run_costs_chart(training))
    with table_col:
        teams_spend = float(spend["effective_cost"].sum()) if not spend.empty else 0.0
        st.caption("Training and fine-tune workloads that held GPUs in the window, by outcome "
                   "at the window's end: finished, failed (held GPUs and ended without "
                   "finishing) or unfinished (still running or waiting). A run's cost is its "
                   "usage in the window plus the idle it carries there (its share of the idle of "
                   "the hours and GPU models it used, as the chargeback's window policy shares it): "
                   f"{ui.compact_usd(float(training['total_cost'].sum()))}, of which usage "
                   f"{ui.compact_usd(float((training['usage_cost_per_run'] * training['runs']).sum()))} "
                   f"of the teams' {ui.compact_usd(teams_spend)}.")
        ui.table_with_csv(training, "cost_per_training_run.csv", key="overview.training.csv")
