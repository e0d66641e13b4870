-- grain: one row per run
with runs as (
    select * from stg_runs
),

nodes as (
    select * from stg_nodes
),

workloads as (
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
        coalesce(w.pods, 0) as pods
    from runs as r
    left join node_totals as n using (run_id)
    left join workload_totals as w using (run_id)
)

select * from final
