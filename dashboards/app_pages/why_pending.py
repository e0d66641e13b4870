"""Why pending: one workload's reasons over time, and what keeps the waiting ones waiting."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data

db, filters = cache.current()


def _file_safe(text: str) -> str:
    """A reason code as a download file name part (letters, digits, - and _ only)."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text))[:60]


st.title("Why is it pending?")
st.caption(f"Run `{filters.run_id}` · waiting as of the end of {filters.date_to} (UTC)")

pending = cache.query(db, "pending_workloads", filters)

# ---- one workload --------------------------------------------------------------------------
search_col, pick_col = st.columns([1, 2])
with search_col:
    text = st.text_input("Search workload id", key="why_pending.search",
                         placeholder="part of an id, e.g. train")
matches = cache.query(db, "search_workloads", filters.run_id, text)
with pick_col:
    if matches.empty:
        st.info(f"No workload id contains {text!r} in run {filters.run_id}.")
        workload_id = None
    else:
        # Waiting workloads first: they are the ones people ask about.
        waiting_ids = set(pending["workload_id"])
        options = sorted(matches["workload_id"], key=lambda w: (w not in waiting_ids,))
        states = dict(zip(matches["workload_id"], matches["final_state"], strict=True))
        workload_id = st.selectbox(
            "Workload", options, key=f"why_pending.workload.{filters.run_id}",
            format_func=lambda w: f"{w} ({'waiting' if w in waiting_ids else states.get(w)})",
        )

if workload_id is not None:
    details = cache.query(db, "workload_details", filters.run_id, workload_id)
    timeline = cache.query(db, "workload_timeline", filters.run_id, workload_id)
    if details:
        a, b, c, d = st.columns(4)
        a.metric("Team", str(details.get("tenant")))
        b.metric("Final state", str(details.get("final_state")))
        wait_s = details.get("wait_s")
        b_wait = "—" if wait_s is None or wait_s != wait_s else f"{float(wait_s) / 3600:,.1f} h"
        c.metric("Waited", b_wait)
        d.metric("Pods (quorum)", f"{details.get('pods')} ({details.get('min_count')})")
    if timeline.empty:
        st.info("No events recorded for this workload.")
    else:
        cache.chart(charts.workload_timeline_chart(timeline))
        cache.table(timeline, column_config={
            "message": st.column_config.TextColumn(width="large"),
        })
        cache.csv_download(timeline, f"timeline_{filters.run_id}.csv",
                           key="why_pending.timeline.csv")

# ---- everything waiting ---------------------------------------------------------------------
st.subheader("Waiting workloads by latest reason")
if pending.empty:
    st.success("No workload is waiting at the end of the selected window.",
               icon=":material/check_circle:")
else:
    grouped = data.pending_by_reason(pending)
    chart_col, table_col = st.columns([1, 1])
    with chart_col:
        cache.chart(charts.pending_by_reason_chart(grouped, height=200))
    with table_col:
        cache.table(grouped)
        cache.csv_download(grouped, "pending_by_reason.csv", key="why_pending.grouped.csv")
    for index, (reason, rows) in enumerate(pending.groupby("latest_reason", sort=False)):
        with st.expander(f"{reason}: {len(rows)} workload(s)"):
            cache.table(rows.drop(columns=["latest_reason"]))
            cache.csv_download(rows, f"pending_{_file_safe(reason)}.csv", key=f"why_pending.reason.{index}")
    st.caption("All waiting workloads, one CSV:")
    cache.csv_download(pending, "pending_workloads.csv", key="why_pending.pending.csv")
