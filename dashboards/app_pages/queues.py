"""Queues: each Kueue ClusterQueue's use of its quota over time, against its nominal quota and
its borrowing limit, and who borrowed from the cohort."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, data, ui, waiting_charts

db, filters = cache.current()
run_range = cache.query(db, data.run_date_range, filters.run_id)
bucket = data.pick_time_bucket(filters, run_range)

st.title("Queues: quota use and borrowing")
ui.scope_caption(filters, "quotas are per flavor: the GPU model filter does not apply")

queues = cache.query(db, data.list_cluster_queues, filters)
if queues.empty:
    holdings = cache.query(db, data.cluster_queue_holdings, filters, bucket)
    if holdings.empty:
        st.info(
            f"Run `{filters.run_id}` has no Kueue queues: it was replayed without a queues file, "
            "so no ClusterQueue admitted its workloads and there is no quota to compare against. "
            "Replay with `--queues kueue.yaml` to see quota use and borrowing here.",
            icon=":material/view_list:",
        )
        st.stop()
    st.info("This database has no quota usage (fct_queue_usage): rebuild it with the current "
            "`gpu-finops build` to compare against nominal quota and borrowing limits. Meanwhile, "
            "the GPUs each ClusterQueue's workloads held:", icon=":material/info:")
    cache.chart(waiting_charts.cluster_queue_holdings_chart(holdings))
    with st.expander(f"GPUs held per ClusterQueue per {bucket}: table"):
        ui.table_with_csv(holdings, f"cluster_queue_holdings_per_{bucket}.csv",
                          key="queues.holdings.csv")
    st.stop()

flavors = sorted(queues["flavor"].dropna().unique().tolist())
picker_col, legend_col = st.columns([1, 2])
with picker_col:
    flavor = st.selectbox("Flavor", ["All flavors", *flavors], key=f"queues.flavor.{filters.run_id}",
                          help="Quotas are set per ResourceFlavor; all flavors adds them up.")
with legend_col:
    st.caption("Blue: GPUs admitted (mean per period) · orange: the part borrowed from the cohort "
               "· solid line: nominal quota · dashed line: nominal quota + borrowing limit (none "
               "when borrowing is unlimited).")
chosen = None if flavor == "All flavors" else flavor
usage = cache.query(db, data.queue_usage_over_time, filters, bucket, chosen)
if usage.empty:
    st.info("No queue usage in this selection. Widen the dates or clear the team filter.",
            icon=":material/filter_alt_off:")
    st.stop()

names = usage["cluster_queue"].drop_duplicates().tolist()
for start in range(0, len(names), 2):
    columns = st.columns(2)
    for column, name in zip(columns, names[start:start + 2], strict=False):
        with column:
            one = usage[usage["cluster_queue"] == name]
            cache.chart(waiting_charts.queue_usage_chart(one, title=str(name)))

st.subheader("Quota per ClusterQueue and flavor")
summary = cache.query(db, data.queue_usage_summary, filters, chosen)
ui.table_with_csv(summary, "queue_usage_summary.csv", key="queues.summary.csv",
                  column_config={"nominal_used_pct": st.column_config.NumberColumn(
                      "nominal used", format="percent")})
with st.expander(f"Quota use per ClusterQueue per {bucket}: table"):
    ui.table_with_csv(usage, f"queue_usage_per_{bucket}.csv", key="queues.usage.csv")

borrowed = cache.query(db, data.borrowed_by_team, filters)
if not borrowed.empty:
    st.subheader("Borrowed GPU-hours by team")
    st.caption("GPU-hours admitted on quota borrowed from the cohort (the FOCUS records marked "
               "as borrowed), and their cost.")
    ui.table_with_csv(borrowed, "borrowed_by_team.csv", key="queues.borrowed.csv")
