"""Workload detail: one workload's pods on nodes over time (a Gantt), what it cost and why it
waited. Linkable: /workload?run=RUN&workload=ID."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data, ui, waiting_charts
from dashboards.text import markdown_text as md
from pipeline.wait_summary import summary_sentence

db, filters = cache.current()

st.title("Workload detail")

linked = st.query_params.get("workload")
search_col, pick_col = st.columns([1, 2])
with search_col:
    text = st.text_input("Search workload id", key="workload.search",
                         placeholder="part of an id; empty: the costliest")
if text:
    options = cache.query(db, data.search_workloads, filters.run_id, text)["workload_id"].tolist()
else:
    options = cache.query(db, data.costliest_workloads, filters, 50)["workload_id"].tolist()
key = f"workload.pick.{filters.run_id}"
# Opened from a link (/workload?run=R&workload=W, or this page reloaded): show W first.
opened_from_link = key not in st.session_state and linked is not None and bool(
    cache.query(db, data.workload_details, filters.run_id, linked))
if opened_from_link:
    options = [linked, *(o for o in options if o != linked)]
    st.session_state[key] = linked
with pick_col:
    if not options:
        st.info(f"No workload id contains {md(repr(text))} in run {md(filters.run_id)}." if text else
                "No workload held GPUs in this selection: search for one by id.")
        st.stop()
    workload_id = st.selectbox("Workload", options, key=key,
                               help="Empty search: the costliest workloads of the selection.")
st.query_params["run"] = filters.run_id
st.query_params["workload"] = workload_id  # the URL names what is shown: share it

details = cache.query(db, data.workload_details, filters.run_id, workload_id)
if not details:
    st.info(f"{md(repr(workload_id))} is not in run {md(filters.run_id)}.")
    st.stop()

st.caption(f"Run {md(filters.run_id)} · team {md(str(details.get('tenant')))} · {md(str(details.get('kind')))} · "
           f"queue {md(details.get('cluster_queue') or details.get('queue') or '—')} · priority "
           f"{details.get('priority')}")
a, b, c, d, e = st.columns(5)
a.metric("Cost", ui.compact_usd(float(details.get("effective_cost") or 0.0)),
         help=f"${float(details.get('effective_cost') or 0.0):,.2f} effective cost, whole run")
b.metric("Final state", str(details.get("final_state")).replace("_", " "))
c.metric("Waited", ui.hours(details.get("wait_s")))
gpus = float(details.get("pods") or 0) * float(details.get("gpus_per_pod") or 0)
d.metric("Pods × GPUs", f"{details.get('pods')} × {float(details.get('gpus_per_pod') or 0):g}",
         help=f"{gpus:g} GPUs in all; quorum (min_count) {details.get('min_count')}; GPU model "
              f"{details.get('gpu_model') or 'any'}")
productive = float(details.get("gpu_hours_productive") or 0.0)
wasted = float(details.get("gpu_hours_gang_wait") or 0.0) + float(details.get("gpu_hours_lost") or 0.0)
e.metric("Useful GPU-hours", f"{productive / (productive + wasted):.0%}" if productive + wasted
         else "—", help=f"{productive:,.1f} productive, {wasted:,.1f} gang_wait or lost")

pods = cache.query(db, data.workload_pods, filters.run_id, workload_id)
timeline = cache.query(db, data.workload_timeline, filters.run_id, workload_id)
if not timeline.empty:
    # The answer first: where its wait went (the same summary as `gpu-finops explain`).
    st.markdown(f"**{md(summary_sentence(timeline.to_dict('records')))}**")
# One time axis for both charts, from its submission to its last pod's end.
times = [*timeline["ts"].dropna(), *pods["start_ts"].dropna(), *pods["end_ts"].dropna()]
domain = (min(times), max(times)) if times else None
if pods.empty:
    st.info("None of its pods ever held a GPU (it never started or was rejected).")
else:
    cache.chart(waiting_charts.workload_gantt_chart(pods, domain=domain))
    with st.expander(f"Pod intervals ({len(pods)}): table"):
        ui.table_with_csv(pods, f"pods_{ui.file_safe(workload_id)}.csv", key="workload.pods.csv")

if not timeline.empty:
    cache.chart(charts.workload_timeline_chart(timeline, height=180, domain=domain))
    with st.expander(f"Events ({len(timeline)}): table"):
        ui.table_with_csv(timeline, f"timeline_{ui.file_safe(workload_id)}.csv",
                          key="workload.timeline.csv",
                          column_config={"message": st.column_config.TextColumn(width="large")})
