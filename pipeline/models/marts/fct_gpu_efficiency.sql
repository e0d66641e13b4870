-- grain: one row per run × tenant × workload kind × GPU model (of the node the GPU-hours ran on)
-- how busy the GPUs that workloads held productively were. allocated_gpu_hours are the
-- productive GPU-hours (gang waits and preemption losses are wastes of their own, in
-- fct_workloads); a workload's measured mean engine-active fraction (the trace's
-- gpu_utilization, x_GpuActiveFraction) splits them into active and allocated idle (held and
-- paid while the engines did nothing). GPU-hours of workloads without a measurement are
-- unmeasured: efficiency counts measured hours only and is null when none are, so an unknown
-- utilisation is never reported as 100 % (or 0 %). active + allocated idle + unmeasured =
-- allocated, in hours and in cost (audit gpu_efficiency_conserved).
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage' and x_Resource = 'gpu' and x_UsageClass = 'productive'
),

workloads as not materialized (
    select * from stg_workloads
),

final as (
    select
        r.x_RunId as run_id,
        r.x_Tenant as tenant,
        w.kind,
        r.x_GpuModel as gpu_model,
        count(distinct r.x_Workload) as workloads,
        count(distinct r.x_Workload) filter (where r.x_UsageSubClass <> 'unmeasured') as measured_workloads,
        xsum(r.PricingQuantity) as allocated_gpu_hours,
        coalesce(xsum(case when r.x_UsageSubClass = 'active' then r.PricingQuantity end), 0) as active_gpu_hours,
        coalesce(xsum(case when r.x_UsageSubClass = 'allocated_idle' then r.PricingQuantity end), 0)
            as allocated_idle_gpu_hours,
        coalesce(xsum(case when r.x_UsageSubClass = 'unmeasured' then r.PricingQuantity end), 0) as unmeasured_gpu_hours,
        -- of the GPU-hours whose utilisation is known, the share the engines were active
        xsum(case when r.x_UsageSubClass = 'active' then r.PricingQuantity end)
            / nullif(xsum(case when r.x_UsageSubClass <> 'unmeasured' then r.PricingQuantity end), 0)
            as efficiency,
        xsum(r.EffectiveCost) as allocated_cost,
        coalesce(xsum(case when r.x_UsageSubClass = 'active' then r.EffectiveCost end), 0) as active_cost,
        coalesce(xsum(case when r.x_UsageSubClass = 'allocated_idle' then r.EffectiveCost end), 0) as allocated_idle_cost,
        coalesce(xsum(case when r.x_UsageSubClass = 'unmeasured' then r.EffectiveCost end), 0) as unmeasured_cost,
        coalesce(xsum(case when r.x_UsageSubClass = 'allocated_idle' then r.ListCost end), 0) as allocated_idle_list_cost
    from records as r
    inner join workloads as w on w.run_id = r.x_RunId and w.workload_id = r.x_Workload
    group by all
    order by all
)

select * from final
