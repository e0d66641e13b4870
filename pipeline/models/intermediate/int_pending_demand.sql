-- grain: one row per run × workload × queue-wait interval × GPU model the workload accepts
-- a workload waits from `submitted` or `requeued` until its next reserved/started/rejected row
with events as (
    select * from stg_events
),

workloads as (
    select * from stg_workloads
),

nodes as (
    select * from stg_nodes
),

runs as (
    select * from stg_runs
),

boundaries as (
    select
        run_id,
        workload_id,
        seq,
        time_s,
        case when event in ('submitted', 'requeued') then 'wait' else 'stop' end as kind
    from events
    where event in ('submitted', 'requeued', 'reserved', 'started', 'rejected')
),

marked as (
    select
        *,
        lag(kind) over (partition by run_id, workload_id order by seq) as previous_kind,
        min(case when kind = 'stop' then time_s end) over (
            partition by run_id, workload_id order by seq
            rows between 1 following and unbounded following
        ) as next_stop_s
    from boundaries
),

waits as (
    -- a second wait row before any stop continues the same wait
    select m.run_id, m.workload_id, m.time_s as start_s,
        least(coalesce(m.next_stop_s, r.horizon_s), r.horizon_s) as end_s
    from marked as m
    inner join runs as r using (run_id)
    where m.kind = 'wait' and coalesce(m.previous_kind, 'stop') = 'stop'
),

accepted_models as (
    -- gpu_model null = any model of the cluster; "A|B" = either
    select distinct w.run_id, w.workload_id, n.gpu_model
    from workloads as w
    inner join nodes as n
        on n.run_id = w.run_id
        and (
            w.gpu_model is null
            or list_contains(list_transform(string_split(w.gpu_model, '|'), lambda x: trim(x)), n.gpu_model)
        )
),

final as (
    select
        wt.run_id,
        wt.workload_id,
        am.gpu_model,
        wt.start_s,
        wt.end_s,
        w.pods * w.gpus_per_pod as demand_gpus
    from waits as wt
    inner join workloads as w using (run_id, workload_id)
    inner join accepted_models as am using (run_id, workload_id)
    where wt.end_s > wt.start_s
)

select * from final
