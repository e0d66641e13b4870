"""Idle GPUs: how many GPU-hours sat idle and why, where (rack or node) and when, how much of it
was fragmentation, which of it could have been avoided, and the demand that can never run."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, data, efficiency_charts, finops_charts, partition_charts, ui

COMMITTED_COLUMNS = ("billing_period_start", "sku_id", "nodes", "committed_quantity", "used_quantity",
                     "utilization", "coverage", "commitment_cost", "unused_cost", "coverable_on_demand_cost")

db, filters = cache.current()
run_range = cache.query(db, data.run_date_range, filters.run_id)
bucket = data.pick_time_bucket(filters, run_range)

st.title("Idle GPUs")
ui.scope_caption(filters, "idle capacity belongs to no team: the team filter does not apply")

metrics = cache.query(db, data.headline_metrics, filters)
if metrics["capacity_gpu_hours"] == 0:
    st.info("No cost records for these filters. Widen the dates or clear the GPU model filter.",
            icon=":material/filter_alt_off:")
    st.stop()

causes = cache.query(db, data.idle_cost_by_cause, filters)
by_cause = dict(zip(causes["cause"], causes["gpu_hours"], strict=True))
a, b, c, d = st.columns(4)
a.metric("Idle", f"{metrics['idle_pct']:.1%}",
         help=f"{metrics['idle_gpu_hours']:,.1f} of {metrics['capacity_gpu_hours']:,.1f} GPU-hours "
              "held by nobody.")
b.metric("Idle cost", ui.compact_usd(metrics["idle_cost"]),
         help=f"${metrics['idle_cost']:,.2f}")
c.metric("Fragmentation", ui.compact_number(by_cause.get("fragmentation", 0.0), " GPU-h"),
         help="Free GPUs on nodes where none of an admitted waiting workload's pods fits, while its "
              "minimum would fit the model's free GPUs if they were packed (each workload counted "
              "once across the models it accepts). Demand larger than the free GPUs is capacity "
              "shortfall, shown apart.")
d.metric("Partial placement", ui.compact_number(by_cause.get("gang_wait (partial placement)", 0.0),
                                                " GPU-h"),
         help="Held by gangs waiting for their last pods (usage class gang_wait): not idle in the "
              "ledger, but as wasted.")

idle_only = causes[causes["usage_class"] == "idle"]
ui.reconciliation([(str(c), float(h)) for c, h in zip(idle_only["cause"], idle_only["gpu_hours"], strict=True)],
                  "idle", metrics["idle_gpu_hours"], unit="gpu_hours")

over_time = cache.query(db, data.idle_by_cause_over_time, filters, bucket)
if over_time.empty:
    st.success("No idle GPU-hours in this selection.", icon=":material/check_circle:")
else:
    cache.chart(charts.idle_by_cause_over_time_chart(over_time, height=220))
    with st.expander(f"Idle GPU-hours by cause per {bucket}: table"):
        ui.table_with_csv(over_time, f"idle_by_cause_per_{bucket}.csv", key="idle.over_time.csv")

st.subheader("Allocated but idle")
held_idle = cache.query(db, data.allocated_idle, filters)
efficiency = cache.query(db, data.gpu_efficiency, filters)
e1, e2, e3 = st.columns(3)
e1.metric("Allocated-idle cost", ui.compact_usd(float(held_idle["allocated_idle_cost"] or 0)),
          help="GPUs held by running workloads whose engines were idle (from each workload's measured "
               "utilisation), beside the idle cost above of GPUs nobody held.")
e2.metric("Allocated idle", ui.compact_number(float(held_idle["allocated_idle_gpu_hours"] or 0), " GPU-h"))
e3.metric("Efficiency (measured)",
          "unknown" if held_idle["efficiency"] is None else f"{held_idle['efficiency']:.1%}",
          help="Active ÷ measured productive GPU-hours; workloads without a measured utilisation are "
               "left out, never counted as busy.")
if not efficiency.empty and held_idle["efficiency"] is not None:
    cache.chart(efficiency_charts.gpu_efficiency_chart(efficiency, "kind", height=180))

st.subheader("Where and when")
level_col, bucket_col, note_col = st.columns([1, 1, 2])
with level_col:
    level = st.segmented_control("Rows", list(data.HEATMAP_LEVELS), key="idle.heatmap.level",
                                 default="rack", required=True) or "rack"
with bucket_col:
    heat_bucket = st.segmented_control("Period", ["hour", "day"], key="idle.heatmap.bucket",
                                       default="day" if bucket != "hour" else "hour",
                                       required=True) or "day"
heatmap = cache.query(db, data.idle_heatmap, filters, level, heat_bucket)
if heatmap.empty:
    st.info("No capacity records for these filters.")
else:
    total = int(heatmap["places_total"].iloc[0])
    shown = heatmap["place"].nunique()
    with note_col:
        which = f"All {total} {level}s" if shown == total else f"The {shown} idlest of {total} {level}s"
        st.caption(f"{which}, idlest first. Colour: the share of the {level}'s GPU-hours that "
                   "nobody held.")
    cache.chart(charts.idle_heatmap_chart(heatmap, level))
    with st.expander(f"Idle per {level} and {heat_bucket}: table"):
        ui.table_with_csv(heatmap.drop(columns=["places_total"]),
                          f"idle_per_{level}_{heat_bucket}.csv", key="idle.heatmap.csv")

st.subheader("Fragmentation")
fragmentation = cache.query(db, data.fragmentation_by_model, filters)
chart_col, table_col = st.columns([1, 1])
with chart_col:
    cache.chart(charts.fragmentation_by_model_chart(fragmentation))
with table_col:
    st.caption("GPU-hours free on nodes where none of a waiting workload's pods fits, while its "
               "minimum would fit that GPU model's free GPUs if they were packed: packing would have "
               "put them to work. Free GPUs beside demand larger than all of them are capacity "
               "shortfall, not fragmentation; those it fits as they are, scheduling latency.")
    ui.table_with_csv(fragmentation, "fragmentation_by_gpu_model.csv", key="idle.fragmentation.csv")

profiles = cache.query(db, data.device_profile_cost, filters)
if not profiles.empty:  # a run with GPUs through DRA (replay --dra): nothing shows otherwise
    st.subheader("GPU partitions (DRA)")
    split_rest = profiles[profiles["usage"] == "partition_fragmentation"]
    p1, p2 = st.columns(2)
    p1.metric("Cost on DRA devices", ui.compact_usd(float(profiles.loc[profiles["usage"] == "workload",
                                                                        "effective_cost"].sum())),
              help="GPU cost of the workloads on devices a DRA driver publishes, each MIG slice priced as "
                   "its share of the whole GPU (docs/dra.md).")
    p2.metric("Partition fragmentation", ui.compact_number(float(split_rest["gpu_hours"].sum()), " GPU-h"),
              help="The rest of GPUs split into MIG partitions: only other slices could have used it, never "
                   "a whole-GPU request.")
    chart_col, table_col = st.columns([1, 1])
    with chart_col:
        cache.chart(partition_charts.device_profile_cost_chart(profiles))
    with table_col:
        st.caption("Cost per MIG profile (whole: whole GPUs through DRA; capacity: a share of a device by "
                   "consumable capacity; mixed: a workload's pods took several kinds on one node), beside "
                   "the idle rest of the split GPUs.")
        ui.table_with_csv(profiles, "gpu_cost_per_device_profile.csv", key="idle.profiles.csv")

st.subheader("Avoidable or sunk")
payment = cache.query(db, data.idle_by_payment, filters)
pools = cache.query(db, data.commitment_pools, filters.run_id)
if payment.empty:
    st.info("No idle GPU-hours in this selection.")
else:
    avoidable = float(payment.loc[payment["kind"] == "avoidable", "effective_cost"].sum())
    sunk = float(payment.loc[payment["kind"] == "sunk", "effective_cost"].sum())
    st.caption(f"Idle on nodes paid by the hour could be given back: {ui.compact_usd(avoidable)} "
               f"avoidable. Idle on Committed nodes is paid whatever happens: "
               f"{ui.compact_usd(sunk)} sunk.")
    ui.reconciliation([("Avoidable", avoidable), ("Sunk", sunk)], "idle cost", metrics["idle_cost"])
    chart_col, table_col = st.columns(2)
    with chart_col:
        cache.chart(finops_charts.idle_by_payment_chart(payment))
    with table_col:
        ui.table_with_csv(payment, "idle_avoidable_or_sunk.csv", key="idle.payment.csv")

st.subheader("Committed capacity")
if pools.empty:
    st.info("This run has no Committed nodes.")
else:
    # Across the page: sixteen columns do not fit half of it.
    gpu_pools = pools[pools["resource"] == "gpu"]
    if not gpu_pools.empty:
        cache.chart(finops_charts.commitment_pools_chart(gpu_pools))
    st.caption("Committed capacity pooled per SKU, per month (whole months: the date and phase "
               "filters do not apply): utilization = committed hours used ÷ committed hours; "
               "coverage = covered usage ÷ commitment-eligible usage (committed hours used ÷ those "
               "and on-demand hours used; spot usage is not eligible, unused committed hours are not "
               "usage). The CSV has every column (units, on-demand hours).")
    # The columns a reader needs fit the page's width (the sixteen of the mart did not: the
    # table was cut off at the right); gpu_model, resource and unit repeat the SKU
    shown = [c for c in COMMITTED_COLUMNS if c in pools.columns]
    ui.table_with_csv(pools[shown], "commitment_pools.csv", key="idle.pools.csv", csv_frame=pools)

st.subheader("Unservable demand")
unservable = cache.query(db, data.unservable_demand, filters)
if unservable.empty:
    st.success("Every workload submitted could run on this cluster and its quotas.",
               icon=":material/check_circle:")
else:
    st.caption("Workloads that can never run (larger than the cluster, more than their queue's "
               "quota can ever hold, a GPU model or queue that does not exist). They are not "
               "demand for the idle causes above: capacity planning, not scheduling.")
    chart_col, table_col = st.columns([1, 1])
    with chart_col:
        cache.chart(finops_charts.unservable_demand_chart(unservable))
    with table_col:
        ui.table_with_csv(unservable, "unservable_demand.csv", key="idle.unservable.csv")
