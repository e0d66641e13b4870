"""Teams: showback (what each team used) or chargeback (what each team pays, idle included), the
cost of waiting and what evictions threw away. Every rule is the fct_chargeback mart's."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data, efficiency_charts, finops_charts, labels, ui
from dashboards.text import markdown_text

db, filters = cache.current()
run_range = cache.query(db, data.run_date_range, filters.run_id)

st.title("Cost per team")
ui.scope_caption(filters)

POLICY_LABELS = {
    "separate": "Idle unallocated (showback)",
    "window": "Idle by period and GPU model (chargeback)",
    "node": "Idle by node",
    "cause": "Idle by cause",
}
policy_col, reclaim_col = st.columns([4, 1])
with policy_col:
    policy = st.segmented_control(
        "Idle capacity", list(POLICY_LABELS), key="teams.idle_policy", default=data.CHARGEBACK_POLICY,
        format_func=lambda policy: POLICY_LABELS.get(policy, policy), required=True,
        help="Showback: idle capacity is nobody's, it stays on the Unallocated (idle) line. "
             "By period and GPU model: the teams that used a GPU model in a charge period carry "
             "its idle in proportion to their cost there; idle of periods and models nobody used "
             "stays unallocated. By node: the same per node. By cause: quota idle to the "
             "owners of the unused quota, barrier idle to the waiting gang's team, shared-device "
             "slack to the fractional tenants, idle without demand to the platform, the rest by "
             "period and model.",
    ) or data.CHARGEBACK_POLICY
with reclaim_col:
    reclaim = st.toggle(
        "Reclaimer pays", key="teams.reclaim",
        help="Work lost when another team's queue reclaimed its GPUs is charged to the reclaiming "
             "team instead of the victim.",
    )

showback = cache.query(db, data.team_showback, filters, policy, reclaim)
if showback.empty or float(showback["charged_cost"].abs().sum()) == 0:
    st.info("No cost records for these filters. Widen the dates, pick another phase or clear the "
            "team and GPU model filters.", icon=":material/filter_alt_off:")
    st.stop()

teams_only = showback[showback["tenant"] != data.IDLE_TENANT]
unallocated = float(showback.loc[showback["tenant"] == data.IDLE_TENANT, "charged_cost"].sum())
a, b, c, d = st.columns(4)
a.metric("Charged to teams", ui.compact_usd(float(teams_only["charged_cost"].sum())),
         help="Effective cost of the teams' usage, plus the idle they carry under this policy.")
b.metric(labels.PLATFORM_LINE, ui.compact_usd(unallocated),
         help="Idle capacity no team carries under this policy (hidden when teams are selected).")
c.metric("Teams", f"{len(teams_only)}")
top = teams_only.iloc[0] if not teams_only.empty else None
d.metric("Largest", f"{top['tenant']} · {float(top['share'] or 0):.0%}" if top is not None else "—",
         help="The team charged the most, and its share of the total shown.")

if not filters.tenants:  # with teams picked, idle shares go beyond the teams' own usage
    headline = cache.query(db, data.headline_metrics, filters)
    ui.reconciliation([(str(t), float(c)) for t, c in zip(showback["tenant"], showback["charged_cost"], strict=True)],
                      "total cost (Overview)", headline["total_cost"])

left, right = st.columns(2)
with left:
    cache.chart(charts.team_chargeback_chart(showback))
with right:
    bucket = data.pick_time_bucket(filters, run_range)
    over_time = cache.query(db, data.team_cost_over_time, filters, bucket, policy, reclaim)
    cache.chart(charts.team_cost_over_time_chart(over_time))

st.subheader("Showback and chargeback table")
st.caption("GPU-hours by usage class and cost per team. Charged = usage + idle share (+ the "
           "reclaimed lost work when the reclaimer pays); the share is of the rows shown. The "
           "same numbers in SQL: the chargeback table and its saved query (SQL page).")
ui.table_with_csv(showback, f"teams_{policy}.csv", key="teams.table.csv")
with st.expander(f"Charged cost per team per {bucket}: table"):
    ui.table_with_csv(over_time, f"teams_{policy}_per_{bucket}.csv", key="teams.over_time.csv")

label_keys = cache.query(db, data.label_keys, filters.run_id)
if label_keys:
    st.subheader("Cost by label")
    label_key = st.selectbox(
        "Allocation key", label_keys, key="teams.label_key",
        index=next((label_keys.index(k) for k in ("cost-center", "cost_center", "project", "team") if k in label_keys), 0),
        help="A pod label or annotation the trace carries: the same bill grouped by its value, under the "
             "idle policy above. Workloads without it are Unlabelled; idle nobody carries stays "
             f"{labels.PLATFORM_LINE}.",
    )
    by_label = cache.query(db, data.label_showback, filters, label_key, policy)
    cache.chart(charts.team_chargeback_chart(by_label.rename(columns={"allocation": "tenant"}),
                                             title=f"Charged cost per {label_key}"))
    if not filters.tenants:
        headline = cache.query(db, data.headline_metrics, filters)
        ui.reconciliation([(str(labels.allocation_name(g)), float(c))
                           for g, c in zip(by_label["allocation"], by_label["charged_cost"], strict=True)],
                          "total cost (Overview)", headline["total_cost"])
    st.caption(f"Charged cost per value of the label {markdown_text(label_key)} (usage + idle share; the reclaim "
               "option is not applied here). The same numbers in SQL: the label allocation table "
               "and its saved query (SQL page).")
    ui.table_with_csv(by_label, f"cost_by_{policy}_label.csv", key="teams.labels.csv")

st.subheader("Cost of delay and lost work")
wait_col, loss_col = st.columns(2)
with wait_col:
    waiting = cache.query(db, data.waiting_cost_by_team, filters)
    if waiting.empty:
        st.info("No workload waited to run in this selection.")
    else:
        cache.chart(finops_charts.waiting_cost_chart(waiting))
        st.caption("GPU-hours each team's workloads demanded while pending, capped by what the "
                   "cluster could have run, valued at list price, for the part of each wait inside "
                   "this window: demand, not spend, and no part of the bill above.")
        ui.table_with_csv(waiting, "pending_demand.csv", key="teams.waiting.csv")
with loss_col:
    losses = cache.query(db, data.eviction_losses, filters)
    if losses.empty:
        st.info("No eviction in this selection.")
    else:
        cache.chart(finops_charts.eviction_losses_chart(losses))
        st.caption("Work since the last checkpoint that each eviction in this window threw "
                   "away (part of the bill above); reclaim: another queue took the GPUs back.")
        ui.table_with_csv(losses, "checkpoint_loss_per_eviction.csv", key="teams.losses.csv")

st.subheader("GPU efficiency")
efficiency = cache.query(db, data.gpu_efficiency, filters)
if efficiency.empty or float(efficiency["allocated_gpu_hours"].sum()) == 0:
    st.info("No productive GPU-hours in this selection.")
elif float(efficiency["active_gpu_hours"].sum() + efficiency["allocated_idle_gpu_hours"].sum()) == 0:
    st.info("No workload here has a measured GPU utilisation (the trace's gpu_utilization, e.g. "
            "from DCGM via `import prometheus`): efficiency is unknown, not 100 %.")
else:
    team_col, kind_col = st.columns(2)
    with team_col:
        cache.chart(efficiency_charts.gpu_efficiency_chart(efficiency, "tenant"))
    with kind_col:
        cache.chart(efficiency_charts.gpu_efficiency_chart(efficiency, "kind"))
    st.caption("Productive GPU-hours split by each workload's measured engine-active fraction: "
               "active, allocated idle (held and paid, engines idle) and unmeasured (no "
               "utilisation in the trace). Efficiency = active ÷ measured GPU-hours "
               "(the GPU efficiency mart; the rightsizing hints mart names the smaller requests).")
    ui.table_with_csv(efficiency, "gpu_efficiency_per_team_and_kind.csv", key="teams.efficiency.csv")
