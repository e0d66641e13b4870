-- grain: one row per run × preempted workload × preemptor (the workloads evictions made room for)
-- reclaim: the preemptor queues in another ClusterQueue than its victim (Kueue's reclaim within
-- the cohort), or, where either has no ClusterQueue, belongs to another team. The reclaim
-- showback option charges the victim's lost work to the preemptor's team (fct_chargeback).
with holdings as (
    select * from int_pod_holdings
),

workloads as not materialized (
    select * from stg_workloads
),

events as not materialized (
    select * from stg_events
),

pairs as (
    select distinct run_id, workload_id, preemptor
    from holdings
    where preemptor is not null
),

workload_queues as (
    select run_id, workload_id, arg_max(cluster_queue, seq) as cluster_queue
    from events
    where cluster_queue is not null
    group by all
),

final as (
    select
        p.run_id,
        p.workload_id,
        w.tenant,
        p.preemptor,
        pw.tenant as preemptor_tenant,
        case
            when vq.cluster_queue is not null and pq.cluster_queue is not null
                then vq.cluster_queue <> pq.cluster_queue
            else w.tenant is distinct from pw.tenant
        end as reclaim
    from pairs as p
    inner join workloads as w using (run_id, workload_id)
    left join workloads as pw on pw.run_id = p.run_id and pw.workload_id = p.preemptor
    left join workload_queues as vq on vq.run_id = p.run_id and vq.workload_id = p.workload_id
    left join workload_queues as pq on pq.run_id = p.run_id and pq.workload_id = p.preemptor
)

select * from final
