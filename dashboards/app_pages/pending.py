"""Pending: one workload's reasons over time and its place in the queue, and what keeps the
waiting ones waiting."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data, labels, ui, waiting_charts
from dashboards.text import markdown_text as md
from pipeline.wait_summary import summary_sentence

db, filters = cache.current()

st.title("Why is it pending?")
window_end = filters.params()["ts_to"]
as_of = f"{window_end:%Y-%m-%d %H:%M} UTC" if window_end is not None else "the end of the run"
ui.scope_caption(filters, f"waiting is judged at {as_of}, the end of this window")

pending = cache.query(db, data.pending_workloads, filters)
waiting_ids = set(pending["workload_id"])

# ---- one workload --------------------------------------------------------------------------
search_col, pick_col = st.columns([1, 2])
with search_col:
    text = st.text_input("Search workload id", key="pending.search",
                         placeholder="part of an id, e.g. train")
matches = cache.query(db, data.search_workloads, filters.run_id, text)
with pick_col:
    if matches.empty:
        st.info(f"No workload id contains {md(repr(text))} in run {md(filters.run_id)}.")
        workload_id = None
    else:
        # Waiting workloads first: they are the ones people ask about.
        options = sorted(matches["workload_id"], key=lambda w: (w not in waiting_ids,))
        workload_id = st.selectbox(
            "Workload", options, key=f"pending.workload.{filters.run_id}",
            format_func=lambda w: f"{w} ({'waiting at ' + as_of if w in waiting_ids else 'not waiting at ' + as_of})",
        )

if workload_id is not None:
    details = cache.query(db, data.workload_details, filters.run_id, workload_id)
    timeline = cache.query(db, data.workload_timeline, filters.run_id, workload_id)
    if details:
        a, b, c, d, e = st.columns([1, 1, 1, 1, 1])
        a.metric("Team", str(details.get("tenant")))
        b.metric(f"At {as_of}", "Waiting" if workload_id in waiting_ids else "Not waiting",
                 help=f"Final state at the end of the run: {labels.words(str(details.get('final_state')))}")
        c.metric("Waited", ui.hours(details.get("wait_s")))
        d.metric("Pods (quorum)", f"{details.get('pods')} ({details.get('min_count')})")
        e.metric("Queue", str(details.get("cluster_queue") or details.get("queue") or "—"))
    if not timeline.empty:
        # The answer first: where its wait went (the same summary as `gpu-finops explain`).
        st.markdown(f"**{md(summary_sentence(timeline.to_dict('records')))}**")
    if timeline.empty:
        st.info("No events recorded for this workload.")
    else:
        position = cache.query(db, data.queue_position, filters.run_id, workload_id)
        # One time axis for both charts: they start and end on the same day.
        times = [*timeline["ts"].dropna(), *position["ts"].dropna()]
        domain = (min(times), max(times)) if times else None
        cache.chart(charts.workload_timeline_chart(timeline, domain=domain))
        if position.empty:
            st.caption("It never waited in a queue: no pending attempt was recorded.")
        else:
            cache.chart(waiting_charts.queue_position_chart(position, domain=domain))
            if (position["source"] == "kueue").all():
                st.caption("Its position in its ClusterQueue at each attempt, as Kueue reported "
                           "it; 1 is next.")
            else:
                st.caption("Its position among the workloads of its queue not yet started, by "
                           "priority then submission time (the order Kueue and kube-scheduler "
                           "use); 1 is next.")
        with st.expander("Events: table", expanded=True):
            ui.table_with_csv(timeline, f"timeline_{ui.file_safe(workload_id)}.csv",
                              key="pending.timeline.csv",
                              column_config={"message": st.column_config.TextColumn(width="large")})
        st.page_link("app_pages/workload.py", label="Its pods on nodes: open Workload detail",
                     icon=":material/view_timeline:",
                     query_params={"run": filters.run_id, "workload": workload_id})

# ---- everything waiting ---------------------------------------------------------------------
st.subheader("Waiting workloads by latest reason")
if pending.empty:
    st.success(f"No workload is waiting at {as_of}.",
               icon=":material/check_circle:")
else:
    grouped = data.pending_by_reason(pending)
    ui.reconciliation_count([(str(r), int(n)) for r, n in zip(grouped["latest_reason"], grouped["workloads"], strict=True)],
                            f"workloads waiting at {as_of}", len(pending))
    chart_col, table_col = st.columns([1, 1])
    with chart_col:
        cache.chart(charts.pending_by_reason_chart(grouped, height=200))
    with table_col:
        ui.table_with_csv(grouped, "pending_by_reason.csv", key="pending.grouped.csv")
    for index, (reason, rows) in enumerate(pending.groupby("latest_reason", sort=False)):
        with st.expander(f"{labels.words(reason)}: {len(rows)} workload(s)"):
            ui.table_with_csv(rows.drop(columns=["latest_reason"]),
                              f"pending_{ui.file_safe(reason)}.csv", key=f"pending.reason.{index}")
    st.caption("All waiting workloads, one CSV:")
    cache.csv_download(pending, "pending_workloads.csv", key="pending.pending.csv")
