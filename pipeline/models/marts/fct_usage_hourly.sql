-- grain: one row per run × charge period × tenant × gpu_model × usage_class × idle_reason
with records as (
    select * from focus_cost_records
),

final as (
    select
        x_RunId as run_id,
        ChargePeriodStart as charge_period_start,
        x_Tenant as tenant,
        x_GpuModel as gpu_model,
        x_UsageClass as usage_class,
        x_IdleReason as idle_reason,
        sum(ConsumedQuantity) as gpu_hours,
        sum(EffectiveCost) as effective_cost,
        sum(ListCost) as list_cost
    from records
    group by all
    order by all
)

select * from final
