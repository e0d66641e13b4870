-- grain: one row per run × workload × attempt × step while the gang is partially placed × GPU model its pods hold
-- a gang holding 0 < n < min_count pods misses (min_count − n) × gpus_per_pod GPUs until its
-- progress starts. While some of its pods are reserved at the barrier (Permit: they hold GPUs
-- without running), the barrier holds capacity: blocked_by = 'gang_barrier'. A gang whose pods
-- started one by one (kube-default) has no barrier: its missing pods are placement demand
-- (blocked_by = 'placement'). The missing GPUs are asked on the GPU models the gang's pods
-- hold in that attempt, split by the GPUs held on each.
with holdings as (
    select * from int_pod_holdings
),

gang as not materialized (
    select * from int_gang_progress
),

workloads as not materialized (
    select * from stg_workloads
),

nodes as not materialized (
    select * from stg_nodes
),

deltas as (
    select run_id, workload_id, attempt, hold_start_s as time_s, 1 as delta,
        case when reserved_s is not null then 1 else 0 end as reserved_delta
    from holdings
    union all
    select run_id, workload_id, attempt, end_s, -1,
        case when reserved_s is not null and started_s is null then -1 else 0 end
    from holdings
    union all
    -- a reservation that turns into a run leaves the barrier
    select run_id, workload_id, attempt, started_s, 0, -1
    from holdings
    where reserved_s is not null and started_s is not null
),

change_points as (
    select run_id, workload_id, attempt, time_s, sum(delta) as delta, sum(reserved_delta) as reserved_delta
    from deltas
    group by all
),

steps as (
    select
        run_id,
        workload_id,
        attempt,
        time_s,
        lead(time_s) over w as next_time_s,
        sum(delta) over (w rows between unbounded preceding and current row) as pods_holding,
        sum(reserved_delta) over (w rows between unbounded preceding and current row) as pods_reserved
    from change_points
    window w as (partition by run_id, workload_id, attempt order by time_s)
),

partial as (
    select
        s.run_id,
        s.workload_id,
        s.attempt,
        w.tenant,
        case when s.pods_reserved > 0 then 'gang_barrier' else 'placement' end as blocked_by,
        s.time_s as start_s,
        least(s.next_time_s, coalesce(g.progress_start_s, s.next_time_s)) as end_s,
        (w.min_count - s.pods_holding) * w.gpus_per_pod as missing_gpus
    from steps as s
    inner join workloads as w using (run_id, workload_id)
    left join gang as g using (run_id, workload_id, attempt)
    where s.next_time_s is not null
        and s.pods_holding > 0
        and s.pods_holding < w.min_count
),

held_models as (
    -- the GPU models the attempt's pods hold, and the share of its held GPUs on each
    select
        h.run_id,
        h.workload_id,
        h.attempt,
        n.gpu_model,
        xsum(h.gpus) / xsum(xsum(h.gpus)) over (partition by h.run_id, h.workload_id, h.attempt) as share
    from holdings as h
    inner join nodes as n using (run_id, node)
    where n.gpu_model is not null
    group by h.run_id, h.workload_id, h.attempt, n.gpu_model
),

final as (
    select
        p.run_id, p.workload_id, p.attempt, p.tenant, m.gpu_model, p.blocked_by, p.start_s, p.end_s,
        p.missing_gpus * m.share as missing_gpus
    from partial as p
    inner join held_models as m using (run_id, workload_id, attempt)
    where p.end_s > p.start_s
)

select * from final
