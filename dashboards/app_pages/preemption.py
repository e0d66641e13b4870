"""Preemption: who was evicted, by whom, and what the thrown-away work cost."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, cascade_charts, data, ui, waiting_charts
from dashboards.text import markdown_text as md

db, filters = cache.current()
run_range = cache.query(db, data.run_date_range, filters.run_id)
bucket = data.pick_time_bucket(filters, run_range)

st.title("Preemption")
ui.scope_caption(filters)

victims = cache.query(db, data.preemption_victims, filters)
summary = data.preemption_summary(victims, cache.query(db, data.preemption_loss, filters))
a, b, c, d = st.columns(4)
a.metric("Evicted pods", f"{summary['evicted_pods']:,}")
b.metric("Victim workloads", f"{summary['victim_workloads']:,}",
         help=f"Preempted by {summary['preemptors']:,} workload(s).")
c.metric("Lost GPU-hours", ui.compact_number(summary["lost_gpu_hours"]),
         help="Work since each victim's last checkpoint, thrown away by its eviction.")
d.metric("Lost cost", ui.compact_usd(summary["lost_cost"]),
         help=f"${summary['lost_cost']:,.2f}")

if not victims.empty:
    ui.reconciliation([(f"{len(victims):,} workloads", float(victims["lost_cost"].sum()))],
                      "lost cost", summary["lost_cost"])

over_time = cache.query(db, data.preemption_over_time, filters, bucket)
if victims.empty and over_time.empty:
    st.success("No workload was preempted in this selection.", icon=":material/check_circle:")
    st.stop()

left, right = st.columns(2)
with left:
    if over_time.empty:
        st.info("Pods were evicted, but none had unsaved work: nothing was lost.")
    else:
        shown = filters.params()
        window = (shown["ts_from"], shown["ts_to"]) if shown["ts_from"] and shown["ts_to"] else None
        cache.chart(waiting_charts.preemption_over_time_chart(over_time, window=window))
with right:
    if not victims.empty:
        cache.chart(waiting_charts.preemption_victims_chart(victims))

st.subheader("Victims")
st.caption("Each workload preempted in the window, or whose lost work lies in it: pods "
           "evicted in the window, by whom, and the GPU-hours of work lost since its last "
           "checkpoint inside the window, with their cost.")
ui.table_with_csv(victims, "preemption_victims.csv", key="preemption.victims.csv")
if not victims.empty:
    pick = st.selectbox("Open a victim in Workload detail", victims["workload_id"].tolist(),
                        key=f"preemption.pick.{filters.run_id}")
    st.page_link("app_pages/workload.py", label=f"Its pods on nodes: {md(pick)}",
                 icon=":material/view_timeline:",
                 query_params={"run": filters.run_id, "workload": pick})
if not over_time.empty:
    with st.expander(f"Lost GPU-hours per team per {bucket}: table"):
        ui.table_with_csv(over_time, f"preemption_lost_per_{bucket}.csv",
                          key="preemption.over_time.csv")

st.subheader("Cascades")
st.caption("A preemption whose preemptor was itself preempted earlier and has not finished since "
           "joins that preemption's chain, one level deeper; any other starts a chain at depth 1. "
           "Pods preempted in the window whose victim is of the selected teams and GPU models, as "
           "the victims above.")
if not cache.query(db, data.has_cascades):
    st.info("This database was built before preemption chains were recorded: rebuild it "
            "(`gpu-finops build`) to see them.")
    st.stop()
chains = cache.query(db, data.preemption_chains, filters)
if chains.empty:
    st.info("No pod was preempted in this selection: no chain.")
    st.stop()
in_cascade = int(chains["preempted_in_cascade"].sum())
a, b, c, d = st.columns(4)
a.metric("Chains", f"{len(chains):,}")
b.metric("Deepest", f"{int(chains['depth'].max()):,}", help="Levels: 1 = preempted by a workload "
         "not recovering from a preemption of its own.")
c.metric("Preempted in a cascade", f"{in_cascade:,}",
         help=f"Of {int(chains['preempted_pods'].sum()):,} preempted pods: by a preemptor that had "
              "itself been preempted.")
d.metric("Lost GPU-hours in chains", ui.compact_number(float(chains["lost_gpu_hours"].sum())),
         help="Each preempted pod's work since its group's last checkpoint (time-outs are in no chain).")
left, right = st.columns(2)
with left:
    cache.chart(cascade_charts.priority_pairs_chart(cache.query(db, data.preemption_pairs, filters)))
with right:
    cache.chart(cascade_charts.depth_chart(cache.query(db, data.preemption_depths, filters)))
cache.chart(cascade_charts.chains_chart(chains))
ui.table_with_csv(chains, "preemption_chains.csv", key="preemption.chains.csv")
