-- grain: one row per run × preempted pod event, in its preemption chain (int_preemption_chains)
-- chain_id: the seq of the chain's first preempted pod event; depth 1 = preempted by a workload
-- not recovering from a preemption of its own; root_workload_id: the chain's origin preemptor.
-- lost_gpu_hours / lost_cost: the pod's work since its group's last checkpoint that this
-- preemption threw away (usage class lost_to_preemption of the holding the row ends), summed
-- as fct_evictions sums an attempt's, so an eviction's pods add up to its loss.
with chains as (
    select * from int_preemption_chains
),

holdings as not materialized (
    select * from int_pod_holdings
),

usage as not materialized (
    select * from int_hourly_usage
),

node_prices as not materialized (
    select * from int_node_prices
),

workloads as not materialized (
    select * from stg_workloads
),

runs as not materialized (
    select * from stg_runs
),

lost as (
    select
        u.run_id,
        u.workload_id,
        u.pod_index,
        u.holding_no,
        -- one row per priced resource: GPU-hours from the GPU row only
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
        c.run_id,
        c.chain_id,
        c.depth,
        c.seq as event_seq,
        c.parent_seq,
        ts_at(r.start_ts, c.time_s) as preempted_at,
        c.victim_workload_id,
        c.victim_pod_index,
        h.attempt as victim_attempt,
        v.priority as victim_priority,
        v.kind as victim_kind,
        v.tenant as victim_tenant,
        c.preemptor_workload_id,
        p.priority as preemptor_priority,
        p.kind as preemptor_kind,
        p.tenant as preemptor_tenant,
        c.root_workload_id,
        coalesce(l.lost_gpu_hours, 0) as lost_gpu_hours,
        coalesce(l.lost_cost, 0) as lost_cost
    from chains as c
    inner join runs as r using (run_id)
    left join workloads as v on v.run_id = c.run_id and v.workload_id = c.victim_workload_id
    left join workloads as p on p.run_id = c.run_id and p.workload_id = c.preemptor_workload_id
    left join holdings as h
        on h.run_id = c.run_id and h.workload_id = c.victim_workload_id
        and h.pod_index = c.victim_pod_index and h.released_seq = c.seq
    left join lost as l
        on l.run_id = c.run_id and l.workload_id = c.victim_workload_id
        and l.pod_index = c.victim_pod_index and l.holding_no = h.holding_no
    order by c.run_id, c.seq
)

select * from final
