-- enum columns hold an allowed value on every row (the FOCUS validator only checks the column)
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, x_Workload, ChargeCategory, PricingCategory, x_UsageClass, x_IdleReason
    from records
    where ChargeCategory is null
        or ChargeCategory not in ('Usage', 'Purchase', 'Tax', 'Credit', 'Adjustment')
        or PricingCategory is null
        or PricingCategory not in ('Standard', 'Dynamic', 'Committed', 'Other')
        or x_UsageClass is null
        or x_UsageClass not in ('productive', 'gang_wait', 'lost_to_preemption', 'idle')
        or x_IdleReason not in ('fragmentation', 'no_demand', 'quota', 'gang_barrier')
)

select * from final
