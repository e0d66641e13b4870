-- grain: one row per run × GPU model × pod size (GPUs per pod of a workload waiting for quota) × step of the model's free GPUs, with the pods of that size that fit
-- The fit test of a quota wait (docs/cost-model.md §3.1): a workload Kueue holds back for quota
-- could have used free GPUs only where its minimum shape fits them, min_pods pods of its
-- request on the nodes of one GPU model it accepts (Kueue gives a workload one flavor), as a
-- placement attempt would test. A node fits
-- floor(free / gpus_per_pod) pods, its free GPUs being its GPUs − what pods hold − its
-- shared-device slack (devices fractions share are not free for a whole-GPU pod). The model's
-- fitting pods are the sum over its nodes, from each change point of a node to the next.
with intervals as (
    select * from int_pod_intervals
),

slack as (
    select * from int_shared_device_slack
),

nodes as (
    select * from stg_nodes
),

pending as (
    select * from int_pending_demand
),

runs as (
    select * from stg_runs
),

pod_sizes as (
    -- only the sizes some quota wait asks for
    select distinct run_id, gpus_per_pod from pending where blocked_by = 'quota' and gpus_per_pod > 0
),

node_changes as (
    select run_id, node, start_s as time_s, gpus as taken_delta from intervals
    union all
    select run_id, node, end_s, -gpus from intervals
    union all
    select run_id, node, start_s, slack_gpus from slack
    union all
    select run_id, node, end_s, -slack_gpus from slack
    union all
    -- every node has a level from the start of the run
    select run_id, node, 0.0, 0.0 from nodes where gpu_model is not null and gpus > 0
),

node_levels as (
    select
        c.run_id,
        c.node,
        n.gpu_model,
        c.time_s,
        -- requests are whole milli-GPUs: rounding drops the float noise of long running sums
        greatest(n.gpus - round(xsum(c.taken_delta) over (
            partition by c.run_id, c.node order by c.time_s
            rows between unbounded preceding and current row
        ), 9), 0) as free_gpus
    from (
        select run_id, node, time_s, xsum(taken_delta) as taken_delta from node_changes group by all
    ) as c
    inner join nodes as n using (run_id, node)
    where n.gpu_model is not null
),

node_fits as (
    -- each node level with the one before it (null at the node's first), so that a pod size's
    -- change of fit is computed on the level's row, without a window over every node × size
    select
        l.run_id,
        l.node,
        l.gpu_model,
        s.gpus_per_pod,
        l.time_s,
        cast(floor(l.free_gpus / s.gpus_per_pod + 1e-9) as bigint) as fit_pods,
        cast(floor(l.previous_free_gpus / s.gpus_per_pod + 1e-9) as bigint) as previous_fit_pods
    from (
        select *, lag(free_gpus) over (partition by run_id, node order by time_s) as previous_free_gpus
        from node_levels
    ) as l
    inner join pod_sizes as s using (run_id)
),

fit_deltas as (
    select
        run_id,
        gpu_model,
        gpus_per_pod,
        time_s,
        fit_pods - coalesce(previous_fit_pods, 0) as fit_delta
    from node_fits
),

model_levels as (
    select
        run_id,
        gpu_model,
        gpus_per_pod,
        time_s,
        sum(fit_delta) over (
            partition by run_id, gpu_model, gpus_per_pod order by time_s
            rows between unbounded preceding and current row
        ) as fit_pods
    from (select run_id, gpu_model, gpus_per_pod, time_s, sum(fit_delta) as fit_delta from fit_deltas group by all)
),

final as (
    select
        m.run_id,
        m.gpu_model,
        m.gpus_per_pod,
        m.time_s as start_s,
        coalesce(lead(m.time_s) over (
            partition by m.run_id, m.gpu_model, m.gpus_per_pod order by m.time_s
        ), r.horizon_s) as end_s,
        m.fit_pods
    from model_levels as m
    inner join runs as r using (run_id)
)

select * from final
where end_s > start_s
