-- productive GPU rows, and only they, carry a usage sub-class; active and allocated idle are the workload's measured fraction of the line and its remainder; unmeasured rows carry no fraction
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

workloads as (
    select * from stg_workloads
),

misclassed as (
    select x_RunId, x_Node, x_Workload, x_UsageClass, x_UsageSubClass, x_GpuActiveFraction,
        ChargePeriodStart, x_Borrowed, PricingQuantity as quantity, cast(null as double) as expected
    from records
    where (x_UsageSubClass is not null) != (x_UsageClass = 'productive' and x_Resource = 'gpu')
        or (x_UsageSubClass = 'unmeasured') != (x_UsageSubClass is not null and x_GpuActiveFraction is null)
        or not (x_GpuActiveFraction between 0 and 1)
),

split as (
    -- one charge line of a measured workload: its active part is the fraction of the whole
    select r.x_RunId, r.x_Node, r.x_Workload, 'productive' as x_UsageClass, 'active' as x_UsageSubClass,
        any_value(w.gpu_utilization) as x_GpuActiveFraction, r.ChargePeriodStart, r.x_Borrowed,
        coalesce(sum(r.PricingQuantity) filter (where r.x_UsageSubClass = 'active'), 0) as quantity,
        any_value(w.gpu_utilization) * sum(r.PricingQuantity) as expected
    from records as r
    inner join workloads as w on w.run_id = r.x_RunId and w.workload_id = r.x_Workload
    where r.x_UsageSubClass in ('active', 'allocated_idle')
    group by r.x_RunId, r.x_Node, r.x_Workload, r.ChargePeriodStart, r.x_Borrowed
),

final as (
    select * from misclassed
    union all
    select * from split
    where abs(quantity - expected) > 1e-9 * greatest(1, abs(expected))
)

select * from final
