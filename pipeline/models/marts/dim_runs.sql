-- grain: one row per run
-- phases (x_Phase): warm-up from start_ts to steady_start_ts, steady until drain_start_ts, drain
-- until end_ts (int_run_phases)
with runs as (
    select * from stg_runs
),

phases as not materialized (
    select * from int_run_phases
),

nodes as not materialized (
    select * from stg_nodes
),

workloads as not materialized (
    select * from stg_workloads
),

node_totals as (
    select run_id, count(*) as nodes, sum(gpus) as gpus from nodes group by run_id
),

workload_totals as (
    select run_id, count(*) as workloads, sum(pods) as pods from workloads group by run_id
),

final as (
    select
        r.run_id,
        r.profile,
        r.seed,
        r.start_ts,
        ts_at(r.start_ts, r.horizon_s) as end_ts,
        r.horizon_s,
        coalesce(n.nodes, 0) as nodes,
        coalesce(n.gpus, 0) as gpus,
        coalesce(w.workloads, 0) as workloads,
        coalesce(w.pods, 0) as pods,
        ts_at(r.start_ts, ph.first_submit_s) as first_submit_ts,
        ts_at(r.start_ts, ph.last_submit_s) as last_submit_ts,
        ts_at(r.start_ts, ph.warmup_end_s) as steady_start_ts,
        ts_at(r.start_ts, ph.drain_start_s) as drain_start_ts
    from runs as r
    left join node_totals as n using (run_id)
    left join workload_totals as w using (run_id)
    left join phases as ph using (run_id)
)

select * from final
