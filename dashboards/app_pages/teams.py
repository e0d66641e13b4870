"""Teams: showback (what each team used) or chargeback (what each team pays, idle included)."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data, ui

db, filters = cache.current()
run_range = cache.query(db, "run_date_range", filters.run_id)

st.title("Cost per team")
ui.scope_caption(filters)

POLICY_LABELS = {
    "separate": "Idle as its own line (showback)",
    "shared": "Idle shared back by cost (chargeback)",
}
policy = st.segmented_control(
    "Idle capacity", list(POLICY_LABELS), key="teams.idle_policy", default="separate",
    format_func=POLICY_LABELS.get, required=True,
    help="Separate: idle capacity is charged to nobody and shows as __idle__. Shared: the idle "
         "cost of each resource (GPUs, CPU, memory) is charged to the teams in proportion to "
         "their own cost of that resource in the selected dates (as the fct_showback mart does "
         "per month). Idle of a resource nobody used stays on __idle__.",
) or "separate"

showback = cache.query(db, "team_showback", filters, policy)
if showback.empty or float(showback["charged_cost"].sum()) == 0:
    st.info("No cost records for these filters. Widen the dates or clear the team and GPU model "
            "filters.", icon=":material/filter_alt_off:")
    st.stop()

teams_only = showback[showback["tenant"] != data.IDLE_TENANT]
unallocated = float(showback.loc[showback["tenant"] == data.IDLE_TENANT, "charged_cost"].sum())
charged = float(showback["charged_cost"].sum())
a, b, c, d = st.columns(4)
a.metric("Charged to teams", ui.compact_usd(float(teams_only["charged_cost"].sum())),
         help="Effective cost of the teams' GPU-hours, plus their idle share when shared.")
b.metric("Not charged (idle)", ui.compact_usd(unallocated),
         help="Idle capacity nobody carries under this policy (hidden when teams are selected).")
c.metric("Teams", f"{len(teams_only)}")
top = teams_only.iloc[0] if not teams_only.empty else None
d.metric("Largest", f"{top['tenant']} · {float(top['share'] or 0):.0%}" if top is not None else "—",
         help="The team charged the most, and its share of the total shown.")

left, right = st.columns(2)
with left:
    cache.chart(charts.team_chargeback_chart(showback))
with right:
    bucket = data.pick_time_bucket(filters, run_range)
    over_time = cache.query(db, "team_cost_over_time", filters, bucket, policy)
    cache.chart(charts.team_cost_over_time_chart(over_time))

st.subheader("Showback and chargeback table")
st.caption("GPU-hours by usage class and cost per team. charged_cost = usage_cost + "
           "idle_share_cost; share is of the rows shown.")
ui.table_with_csv(showback, f"teams_{policy}.csv", key="teams.table.csv")
with st.expander(f"Charged cost per team per {bucket}: table"):
    ui.table_with_csv(over_time, f"teams_{policy}_per_{bucket}.csv", key="teams.over_time.csv")
