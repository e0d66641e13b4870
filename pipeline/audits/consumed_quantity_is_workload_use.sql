-- ConsumedQuantity is what workloads consumed: = PricingQuantity on workload rows, 0 on idle rows, null on Unused-commitment rows (FOCUS) and Purchase rows
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, ChargePeriodStart, ChargeCategory, x_Workload, x_UsageClass,
        CommitmentDiscountStatus, ConsumedQuantity, PricingQuantity
    from records
    where case
        when ChargeCategory <> 'Usage' or CommitmentDiscountStatus = 'Unused' then ConsumedQuantity is not null
        when x_UsageClass = 'idle' then ConsumedQuantity is distinct from 0.0
        else ConsumedQuantity is distinct from PricingQuantity
    end
)

select * from final
