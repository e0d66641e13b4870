-- ChargePeriodStart < ChargePeriodEnd, inside [BillingPeriodStart, BillingPeriodEnd)
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, x_Workload, ChargePeriodStart, ChargePeriodEnd,
        BillingPeriodStart, BillingPeriodEnd
    from records
    where not (ChargePeriodStart < ChargePeriodEnd)
        or not (BillingPeriodStart <= ChargePeriodStart and ChargePeriodStart < BillingPeriodEnd)
        or ChargePeriodStart is null or ChargePeriodEnd is null
)

select * from final
