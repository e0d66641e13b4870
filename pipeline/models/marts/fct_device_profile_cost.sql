-- grain: one row per run × charge period × GPU model × team × device profile × usage (DRA runs only; empty without --dra)
-- What GPUs published through DRA cost, by what was taken of them: usage = 'workload' rows are
-- the GPU Usage records of workloads on the devices they took (device_profile: a MIG profile
-- such as 1g.10gb, whole, capacity or mixed, int_device_profiles; every usage class), usage =
-- 'partition_fragmentation' the idle rest of GPUs split into partitions (device_profile null,
-- team __idle__). Per charge period, so readers filter dates as on the FOCUS records.
-- The workload rows add up to the DRA workloads' GPU cost to the cent (audit
-- device_profile_cost_conserved).
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage' and x_Resource = 'gpu'
),

profiles as not materialized (
    select * from int_device_profiles
),

workload_rows as (
    select
        r.x_RunId as run_id,
        r.ChargePeriodStart as charge_period_start,
        r.x_GpuModel as gpu_model,
        r.x_Tenant as tenant,
        p.device_profile,
        'workload' as usage,
        any_value(p.gpu_share) filter (where p.gpu_share is not null) as gpu_share,
        count(distinct r.x_Workload) as workloads,
        xsum(r.PricingQuantity) as gpu_hours,
        xsum(r.ListCost) as list_cost,
        xsum(r.EffectiveCost) as effective_cost
    from records as r
    inner join profiles as p on p.run_id = r.x_RunId and p.workload_id = r.x_Workload and p.node = r.x_Node
    group by all
),

fragmentation_rows as (
    select
        x_RunId as run_id,
        ChargePeriodStart as charge_period_start,
        x_GpuModel as gpu_model,
        x_Tenant as tenant,
        cast(null as varchar) as device_profile,
        'partition_fragmentation' as usage,
        cast(null as double) as gpu_share,
        0 as workloads,
        xsum(PricingQuantity) as gpu_hours,
        xsum(ListCost) as list_cost,
        xsum(EffectiveCost) as effective_cost
    from records
    where x_IdleReason = 'partition_fragmentation'
    group by all
),

final as (
    select * from workload_rows
    union all
    select * from fragmentation_rows
    order by all
)

select * from final
