-- grain: one row per run × GPU model × pod size (GPUs per pod of a waiting workload) × step of the model's free GPUs, with the pods of that size that fit, the free GPUs on nodes where none fits, and all free GPUs
-- The fit tests of the idle causes (docs/cost-model.md §3.1): a waiting workload could have
-- used free GPUs only where its minimum shape fits them, min_pods pods of its request on the
-- nodes of one GPU model it accepts (Kueue gives a workload one flavor), as a placement attempt
-- would test. A node fits floor(free / gpus_per_pod) pods, its free GPUs being its GPUs − what
-- pods hold − its shared-device slack (devices fractions share are not free for a whole-GPU
-- pod); where it fits none, its free GPUs are unusable by that size (fragmented in the FGD
-- paper's sense). The model's sums over its nodes hold from each change point of a node to the
-- next:
--   fit_pods          pods of the size that fit as the GPUs are (the minimum fits if ≥ min_pods);
--   unfit_free_gpus   free GPUs on the nodes where no pod of the size fits;
--   free_gpus         all free GPUs (the minimum would fit packed if min_pods × size ≤ them).
with intervals as (
    select * from int_pod_intervals
),

slack as not materialized (
    select * from int_shared_device_slack
),

nodes as not materialized (
    select * from stg_nodes
),

pending as not materialized (
    select * from int_pending_demand
),

runs as not materialized (
    select * from stg_runs
),

workloads as not materialized (
    select * from stg_workloads
),

pod_sizes as (
    -- only the sizes some wait asks for (a gang's missing pods are of its size)
    select distinct run_id, gpus_per_pod from pending where gpus_per_pod > 0
    union
    select distinct run_id, gpus_per_pod from workloads where gpus_per_pod > 0 and min_count > 1
),

shape_keys as (
    -- skey numbers a run's GPU model × pod size: the timelines' groups and windows run on it,
    -- the names are joined back once, to the result
    select *, row_number() over (order by run_id, gpu_model, gpus_per_pod) as skey
    from (
        select distinct n.run_id, n.gpu_model, s.gpus_per_pod
        from nodes as n
        inner join pod_sizes as s using (run_id)
        where n.gpu_model is not null
    )
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

node_steps as (
    -- each node level with the one before it (null at the node's first)
    select *, lag(free_gpus) over (partition by run_id, node order by time_s) as previous_free_gpus
    from node_levels
),

node_fits as (
    -- a pod size's change of fit is computed on the node level's row, without a window over
    -- every node × size
    select
        s.skey,
        l.time_s,
        cast(floor(l.free_gpus / s.gpus_per_pod + 1e-9) as bigint) as fit_pods,
        cast(floor(l.previous_free_gpus / s.gpus_per_pod + 1e-9) as bigint) as previous_fit_pods,
        l.free_gpus,
        coalesce(l.previous_free_gpus, 0) as previous_free_gpus
    from node_steps as l
    inner join shape_keys as s on s.run_id = l.run_id and s.gpu_model = l.gpu_model
),

model_free as (
    -- all free GPUs of a model and the end of each of its steps: the same for every pod size (a
    -- size's timeline has the model's change points), so summed and numbered once per model
    select
        run_id,
        gpu_model,
        time_s,
        coalesce(lead(time_s) over w, r.horizon_s) as end_s,
        -- whole milli-GPUs: rounding drops the float noise of long running sums
        round(xsum(free_delta) over (w rows between unbounded preceding and current row), 9) as free_gpus
    from (
        select run_id, gpu_model, time_s, xsum(free_gpus - coalesce(previous_free_gpus, 0)) as free_delta
        from node_steps
        group by all
    )
    inner join runs as r using (run_id)
    window w as (partition by run_id, gpu_model order by time_s)
),

fit_deltas as (
    select
        skey,
        time_s,
        fit_pods - coalesce(previous_fit_pods, 0) as fit_delta,
        case when fit_pods = 0 then free_gpus else 0 end
            - case when coalesce(previous_fit_pods, 0) = 0 then previous_free_gpus else 0 end as unfit_delta
    from node_fits
),

model_levels as (
    select
        skey,
        time_s,
        sum(fit_delta) over w as fit_pods,
        round(xsum(unfit_delta) over w, 9) as unfit_free_gpus  -- (whole milli-GPUs, as above)
    from (
        select skey, time_s, sum(fit_delta) as fit_delta, xsum(unfit_delta) as unfit_delta
        from fit_deltas
        group by all
    )
    window w as (partition by skey order by time_s rows between unbounded preceding and current row)
),

final as (
    select
        k.run_id,
        k.gpu_model,
        k.gpus_per_pod,
        m.time_s as start_s,
        f.end_s,
        m.fit_pods,
        m.unfit_free_gpus,
        f.free_gpus
    from model_levels as m
    inner join shape_keys as k using (skey)
    inner join model_free as f using (run_id, gpu_model, time_s)
)

select * from final
where end_s > start_s
