-- grain: one row per run × pod × holding interval × usage class
with intervals as (
    select * from int_pod_intervals
),

nodes as not materialized (
    select * from stg_nodes
),

runs as not materialized (
    select * from stg_runs
),

final as (
    select
        i.run_id,
        i.workload_id,
        i.pod_index,
        i.node,
        n.gpu_model,
        i.gpus,
        ts_at(r.start_ts, i.start_s) as start_ts,
        ts_at(r.start_ts, i.end_s) as end_ts,
        i.usage_class
    from intervals as i
    inner join runs as r using (run_id)
    left join nodes as n using (run_id, node)
    -- a total order (a pod's segments never start together): the same rows in the same order on
    -- any number of threads
    order by i.run_id, i.workload_id, i.pod_index, i.start_s, i.holding_no, i.usage_class
)

select * from final
