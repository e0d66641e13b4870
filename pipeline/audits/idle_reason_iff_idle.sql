-- x_IdleReason is set exactly on idle rows; idle rows belong to no workload and tenant __idle__; usage rows name their workload; purchases are commitment rows
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, x_Workload, x_Tenant, x_UsageClass, x_IdleReason, ChargeCategory
    from records
    where (x_UsageClass = 'idle') != (x_IdleReason is not null)
        or (x_UsageClass = 'idle' and (x_Workload is not null or x_Tenant != '__idle__'))
        or (x_UsageClass in ('productive', 'gang_wait', 'lost_to_preemption') and x_Workload is null)
        or ((x_UsageClass = 'commitment_purchase') != (ChargeCategory = 'Purchase'))
        or (x_UsageClass = 'commitment_purchase'
            and (x_Workload is not null or x_Tenant != '__commitment__' or CommitmentDiscountId is null))
        or (x_IdleReason = 'unallocated') != (x_UsageClass = 'idle' and x_Resource <> 'gpu')
)

select * from final
