-- at no moment do the pods on a node hold more GPUs than it has
with intervals as (
    select * from fct_pod_intervals
),

nodes as (
    select * from dim_nodes
),

changes as (
    select run_id, node, start_ts as ts, gpus as delta from intervals
    union all
    select run_id, node, end_ts, -gpus from intervals
),

per_instant as (
    select run_id, node, ts, sum(delta) as delta from changes group by all
),

held as (
    select
        run_id, node, ts,
        sum(delta) over (partition by run_id, node order by ts
            rows between unbounded preceding and current row) as held_gpus
    from per_instant
),

final as (
    select h.run_id, h.node, h.ts, h.held_gpus, n.gpus as node_gpus
    from held as h
    left join nodes as n using (run_id, node)
    where n.gpus is null or h.held_gpus > n.gpus + 1e-9
)

select * from final
