-- grain: one row per run × charge period × tenant × gpu_model × usage_class × idle_reason × resource × pricing category (Usage rows)
-- phase: the run phase of the charge period (x_Phase: warmup, steady, drain); pricing_category:
-- how the nodes are paid (idle on Committed nodes is sunk, elsewhere avoidable)
-- gpu_hours counts GPU rows only (0 on CPU and memory rows); quantity is in the resource's unit
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

final as (
    select
        x_RunId as run_id,
        ChargePeriodStart as charge_period_start,
        x_Tenant as tenant,
        x_GpuModel as gpu_model,
        x_UsageClass as usage_class,
        x_IdleReason as idle_reason,
        coalesce(xsum(case when x_Resource = 'gpu' then PricingQuantity end), 0) as gpu_hours,
        xsum(EffectiveCost) as effective_cost,
        xsum(ListCost) as list_cost,
        x_Resource as resource,
        xsum(PricingQuantity) as quantity,
        any_value(PricingUnit) as unit,
        any_value(x_Phase) as phase,
        PricingCategory as pricing_category
    from records
    group by all
    order by all
)

select * from final
