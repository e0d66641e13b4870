-- grain: one row per run × workload that can never run (never admitted, reserved or started, and one of the facts below)
-- the facts, strongest first (`evidence`): a `rejected` row that says it can never run
-- (LargerThanCluster, UnknownGpuModel, UnknownQueue); Kueue's latest `pending` row says no
-- quota can ever hold it (ExceedsMaxQuota, NoMatchingFlavor, Misconfigured, Suspended); it
-- asks more GPUs than its ClusterQueue could hold in any GPU flavor on an empty cluster
-- (cluster_queues.parquet: nominal + borrowing limit, and never more than every queue's
-- nominal quota of the flavor together); or fewer than min_count of its pods fit on all the
-- nodes of the GPU models it accepts. Such demand is not demand for idle causes: it is
-- reported on its own (fct_unservable_demand).
with events as (
    select * from stg_events
),

workloads as not materialized (
    select * from stg_workloads
),

accepted_models as not materialized (
    select * from int_workload_gpu_models
),

nodes as not materialized (
    select * from stg_nodes
),

queues as (
    select * from stg_cluster_queues
    where is_gpu
),

facts as (
    select
        run_id,
        workload_id,
        bool_or(event in ('admitted', 'reserved', 'started')) as ran,
        arg_max(reason, seq) filter (
            where event = 'rejected' and reason in ('LargerThanCluster', 'UnknownGpuModel', 'UnknownQueue')
        ) as rejected_reason,
        arg_max(reason, seq) filter (where event = 'pending') as latest_pending_reason,
        arg_max(cluster_queue, seq) filter (where cluster_queue is not null) as cluster_queue
    from events
    group by all
),

flavor_totals as (
    -- what every queue of the run owns of a flavor: no queue can ever hold more
    select run_id, flavor, xsum(nominal_quota) as flavor_nominal
    from queues
    group by all
),

queue_ceilings as (
    -- the most a ClusterQueue could hold of any of its GPU flavors
    select
        q.run_id,
        q.cluster_queue,
        max(least(q.nominal_quota + coalesce(q.borrowing_limit, 'infinity'::double), t.flavor_nominal))
            as most_gpus
    from queues as q
    inner join flavor_totals as t using (run_id, flavor)
    group by all
),

node_shapes as (
    -- nodes alike in model and GPUs hold alike
    select run_id, gpu_model, gpus, count(*) as nodes
    from nodes
    where gpu_model is not null
    group by all
),

pods_that_fit as (
    -- pods of the workload's request that all the nodes of its accepted models hold at once
    select
        w.run_id,
        w.workload_id,
        sum(n.nodes * case
            when w.gpus_per_pod <= 0 then 1e18
            -- requests are whole milli-GPUs; below one GPU, floor(1000 / milli) share a device
            when w.gpus_per_pod < 1 then n.gpus * floor(1000 / round(w.gpus_per_pod * 1000))
            else floor(n.gpus / w.gpus_per_pod)
        end) as pods
    from workloads as w
    inner join accepted_models as am using (run_id, workload_id)
    inner join node_shapes as n on n.run_id = am.run_id and n.gpu_model = am.gpu_model
    group by all
),

judged as (
    select
        w.run_id,
        w.workload_id,
        w.tenant,
        f.cluster_queue,
        w.pods * w.gpus_per_pod as demand_gpus,
        case
            when f.rejected_reason is not null then f.rejected_reason
            when f.latest_pending_reason in ('ExceedsMaxQuota', 'NoMatchingFlavor', 'Misconfigured', 'Suspended')
                then f.latest_pending_reason
            when w.pods * w.gpus_per_pod > c.most_gpus then 'ExceedsMaxQuota'
            when p.pods is null then 'UnknownGpuModel'
            when p.pods < w.min_count then 'LargerThanCluster'
        end as reason,
        case
            when f.rejected_reason is not null then 'rejected'
            when f.latest_pending_reason in ('ExceedsMaxQuota', 'NoMatchingFlavor', 'Misconfigured', 'Suspended')
                then 'kueue'
            when w.pods * w.gpus_per_pod > c.most_gpus then 'quota_table'
            when p.pods is null or p.pods < w.min_count then 'cluster'
        end as evidence
    from workloads as w
    left join facts as f using (run_id, workload_id)
    left join queue_ceilings as c on c.run_id = w.run_id and c.cluster_queue = f.cluster_queue
    left join pods_that_fit as p using (run_id, workload_id)
    where not coalesce(f.ran, false)
),

final as (
    select run_id, workload_id, tenant, cluster_queue, reason, evidence, demand_gpus
    from judged
    where reason is not null
)

select * from final
