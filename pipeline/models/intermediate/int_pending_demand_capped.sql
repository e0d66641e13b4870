-- grain: one row per run × workload × charge period × GPU model, with the GPU-hours the workload demanded while pending there, capped by what the cluster could have run (its idle GPU-hours there)
-- The cost of delay a reader can defend (docs/cost-model.md §6.2): a waiting workload's GPUs ×
-- its wait (int_pending_demand; workloads that can never run are left out: they are
-- unservable demand, fct_unservable_demand) counted only as far as the cluster could have run
-- it:
--   fit       on a model where min_pods of its pods fit on the model's nodes (empty), at most
--             the pods that fit there (Kueue gives a workload one flavor: its demand is split
--             over those models in proportion to the GPUs its pods fit on each, never more than
--             it fits on the best one);
--   idle      per charge period and model, the demand never exceeds the model's idle
--             GPU-hours (int_node_capacity_periods): GPUs that pods held could not have run
--             it, so a fully busy model caps it at zero; where the waiting workloads together
--             demand more, each is scaled down in proportion.
-- list_value: those GPU-hours at the model's list price. Demand, not spend: nobody paid it.
with pending as (
    select * from int_pending_demand
),

nodes as not materialized (
    select * from stg_nodes
),

prices as not materialized (
    select * from stg_prices
),

runs as not materialized (
    select * from stg_runs
),

accepted_models as not materialized (
    select * from int_workload_gpu_models
),

capacity as not materialized (
    select * from int_node_capacity_periods
),

model_idle as (
    -- what the cluster could have run: the GPU-hours nobody held, per charge period and model
    select run_id, gpu_model, period_index, xsum(idle_gpu_hours) as idle_gpu_hours
    from capacity
    where gpu_model is not null
    group by all
),

shapes as (
    select distinct run_id, workload_id, demand_gpus, gpus_per_pod, min_pods,
        cast(round(demand_gpus / gpus_per_pod) as bigint) as pods
    from pending
    where gpus_per_pod > 0
),

node_shapes as (
    -- the nodes of a model by their GPU count: a model's nodes are mostly alike, so a workload
    -- meets a few rows here instead of every node
    select run_id, gpu_model, gpus, count(*) as nodes
    from nodes
    where gpu_model is not null
    group by all
),

model_fits as (
    -- pods of the workload's size each accepted model's nodes hold when empty
    select s.run_id, s.workload_id, am.gpu_model, s.demand_gpus, s.gpus_per_pod, s.min_pods, s.pods,
        sum(n.nodes * cast(floor(n.gpus / s.gpus_per_pod + 1e-9) as bigint)) as fit_pods
    from shapes as s
    inner join accepted_models as am using (run_id, workload_id)
    inner join node_shapes as n on n.run_id = s.run_id and n.gpu_model = am.gpu_model
    group by all
),

fit_shares as (
    select
        run_id,
        workload_id,
        gpu_model,
        least(pods, fit_pods) * gpus_per_pod as fit_gpus,
        -- what it could run at once: the most its pods fit on one model
        max(least(pods, fit_pods) * gpus_per_pod) over (partition by run_id, workload_id) as capped_gpus,
        xsum(least(pods, fit_pods) * gpus_per_pod) over (partition by run_id, workload_id) as all_fit_gpus
    from model_fits
    where fit_pods >= min_pods
),

per_period as (
    select
        p.run_id,
        p.workload_id,
        p.tenant,
        k as period_index,
        xsum(least(p.end_s, (k + 1) * r.charge_period_s, r.horizon_s)
            - greatest(p.start_s, k * r.charge_period_s)) / 3600.0 as pending_hours
    from pending as p
    inner join runs as r using (run_id),
        unnest(range(
            cast(floor(p.start_s / r.charge_period_s) as bigint),
            cast(ceil(p.end_s / r.charge_period_s) as bigint)
        )) as t(k)
    group by all
),

fit_capped as (
    select
        d.run_id,
        d.workload_id,
        d.tenant,
        d.period_index,
        f.gpu_model,
        d.pending_hours * f.capped_gpus * f.fit_gpus / f.all_fit_gpus as fit_gpu_hours
    from per_period as d
    inner join fit_shares as f using (run_id, workload_id)
),

idle_capped as (
    select
        c.*,
        coalesce(m.idle_gpu_hours, 0) as model_idle_gpu_hours,
        xsum(c.fit_gpu_hours) over (partition by c.run_id, c.period_index, c.gpu_model) as model_demand
    from fit_capped as c
    left join model_idle as m using (run_id, gpu_model, period_index)
),

final as (
    select
        c.run_id,
        c.workload_id,
        c.tenant,
        c.period_index,
        c.gpu_model,
        c.fit_gpu_hours * least(1.0, c.model_idle_gpu_hours / nullif(c.model_demand, 0)) as gpu_hours,
        c.fit_gpu_hours * least(1.0, c.model_idle_gpu_hours / nullif(c.model_demand, 0))
            * coalesce(pr.list_unit_price, 0) as list_value
    from idle_capped as c
    left join prices as pr
        on pr.run_id = c.run_id and pr.resource = 'gpu' and pr.gpu_model = c.gpu_model
    where c.fit_gpu_hours > 0 and c.model_idle_gpu_hours > 0
)

select * from final
