-- grain: one row per run × workload × attempt that ended in an eviction (preempted or timed out)
-- checkpoint loss per eviction: the work since the group's last checkpoint that the eviction
-- threw away (usage class lost_to_preemption), in GPU-hours and cost (every priced resource).
-- preemptor / preemptor_tenant: the workload the preemption made room for (schema 1.2) and its
-- team; reclaim: as int_preemptions says (another ClusterQueue, or another team)
with usage as (
    select * from int_hourly_usage
),

holdings as not materialized (
    select * from int_pod_holdings
),

node_prices as not materialized (
    select * from int_node_prices
),

workloads as not materialized (
    select * from stg_workloads
),

preemptions as not materialized (
    select * from int_preemptions
),

runs as not materialized (
    select * from stg_runs
),

evicted as (
    select
        run_id,
        workload_id,
        attempt,
        min(end_s) as evicted_s,
        -- pods evicted at the same moment: the first release row decides (a total order)
        arg_min(end_event, (end_s, released_seq)) as end_event,
        arg_min(preemptor, (end_s, released_seq)) filter (where preemptor is not null) as preemptor,
        count(*) as pods_evicted
    from holdings
    where end_event in ('preempted', 'timed_out')
    group by all
),

lost as (
    select
        u.run_id,
        u.workload_id,
        u.attempt,
        -- one row per priced resource of the node: GPU-hours from its GPU row only
        xsum(case when u_price.resource = 'gpu' then u.gpu_hours end) as lost_gpu_hours,
        xsum(case u_price.resource
            when 'gpu' then u.gpu_hours
            when 'cpu' then u.cpu_core_hours
            else u.memory_gib_hours
        end * u_price.effective_unit_price) as lost_cost
    from usage as u
    inner join node_prices as u_price using (run_id, node)
    where u.usage_class = 'lost_to_preemption'
        and (u_price.resource = 'gpu' and u.gpus > 0
            or u_price.resource = 'cpu' and u.cpu_cores > 0
            or u_price.resource = 'memory' and u.memory_gib > 0)
    group by all
),

final as (
    select
        e.run_id,
        e.workload_id,
        w.tenant,
        w.kind,
        e.attempt,
        ts_at(r.start_ts, e.evicted_s) as evicted_ts,
        e.end_event,
        e.pods_evicted,
        e.preemptor,
        p.preemptor_tenant,
        coalesce(p.reclaim, false) as reclaim,
        w.checkpoint_interval_s,
        coalesce(l.lost_gpu_hours, 0) as lost_gpu_hours,
        coalesce(l.lost_cost, 0) as lost_cost
    from evicted as e
    inner join workloads as w using (run_id, workload_id)
    inner join runs as r using (run_id)
    left join preemptions as p using (run_id, workload_id, preemptor)
    left join lost as l using (run_id, workload_id, attempt)
    order by e.run_id, e.workload_id, e.attempt
)

select * from final
