-- grain: one row per run × workload whose measured GPU efficiency is below 50 % and for which a smaller request exists
-- what a smaller GPU request would have cost (gpu_finops.rightsizing: the rule, and the sweep
-- scenario `rightsize` that replays the trace with these requests to measure waits and idle).
-- suggested_gpus_per_pod: rightsized_gpus_per_pod (macros.sql); the pods keep their run time,
-- so suggested_gpu_hours and suggested_cost are the productive GPU-hours and cost scaled by
-- suggested ÷ requested GPUs, at the same prices; saving = allocated_cost − suggested_cost.
-- Before any replay: the sweep says what the freed GPUs do to waits and idle.
with workloads as (
    select * from stg_workloads
),

records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage' and x_Resource = 'gpu' and x_UsageClass = 'productive'
),

productive as (
    select x_RunId as run_id, x_Workload as workload_id,
        xsum(PricingQuantity) as allocated_gpu_hours,
        xsum(EffectiveCost) as allocated_cost,
        coalesce(xsum(case when x_UsageSubClass = 'allocated_idle' then EffectiveCost end), 0) as allocated_idle_cost
    from records
    group by all
),

candidates as (
    select w.*, rightsized_gpus_per_pod(w.gpus_per_pod, w.gpu_utilization) as suggested_gpus_per_pod
    from workloads as w
    where w.gpu_utilization < 0.5
),

final as (
    select
        c.run_id,
        c.workload_id,
        c.tenant,
        c.kind,
        c.gpu_model,
        c.pods,
        c.gpus_per_pod,
        c.gpu_utilization,
        c.suggested_gpus_per_pod,
        least(1.0, c.gpus_per_pod * c.gpu_utilization / c.suggested_gpus_per_pod) as suggested_utilization,
        p.allocated_gpu_hours,
        p.allocated_cost,
        p.allocated_idle_cost,
        p.allocated_gpu_hours * c.suggested_gpus_per_pod / c.gpus_per_pod as suggested_gpu_hours,
        p.allocated_cost * c.suggested_gpus_per_pod / c.gpus_per_pod as suggested_cost,
        p.allocated_cost - p.allocated_cost * c.suggested_gpus_per_pod / c.gpus_per_pod as saving
    from candidates as c
    inner join productive as p using (run_id, workload_id)
    where c.suggested_gpus_per_pod is not null
    order by c.run_id, saving desc, c.workload_id
)

select * from final
