-- grain: one row per run × billing period × metric × scope (FinOps-for-AI unit economics, long format)
-- scope is `all`, `cause:<idle reason>` or `kind:<workload kind>`; units are USD, GPU-Hours,
-- USD/GPU-Hour or ratio. A metric whose denominator is zero is left out.
-- training runs are workloads of kind `training` or `fine-tune`
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

workloads as (
    select * from stg_workloads
),

totals as (
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        sum(EffectiveCost) as total_cost,
        sum(ListCost) as total_list_cost,
        sum(EffectiveCost) filter (where x_Resource = 'gpu') as gpu_cost,
        sum(PricingQuantity) filter (where x_Resource = 'gpu') as capacity_gpu_hours,
        coalesce(sum(PricingQuantity) filter (where x_Resource = 'gpu' and x_UsageClass <> 'idle'), 0)
            as allocated_gpu_hours,
        coalesce(sum(PricingQuantity) filter (where x_Resource = 'gpu' and x_UsageClass = 'productive'), 0)
            as productive_gpu_hours,
        coalesce(sum(PricingQuantity) filter (where x_Resource = 'gpu' and x_UsageClass = 'gang_wait'), 0)
            as gang_wait_gpu_hours,
        coalesce(sum(PricingQuantity) filter (
            where x_Resource = 'gpu' and x_UsageClass = 'lost_to_preemption'), 0) as lost_gpu_hours,
        coalesce(sum(EffectiveCost) filter (where x_UsageClass = 'gang_wait'), 0) as gang_wait_cost,
        coalesce(sum(EffectiveCost) filter (where x_UsageClass = 'lost_to_preemption'), 0) as lost_cost,
        coalesce(sum(PricingQuantity) filter (
            where x_Resource = 'gpu' and x_UsageClass <> 'idle' and PricingCategory = 'Dynamic'), 0)
            as spot_gpu_hours,
        coalesce(sum(PricingQuantity) filter (
            where x_Resource = 'gpu' and CommitmentDiscountStatus = 'Used'), 0) as committed_used_gpu_hours,
        coalesce(sum(PricingQuantity) filter (
            where x_Resource = 'gpu' and CommitmentDiscountId is not null), 0) as committed_gpu_hours,
        coalesce(sum(EffectiveCost) filter (where CommitmentDiscountStatus = 'Unused'), 0)
            as unused_commitment_cost,
        coalesce(sum(PricingQuantity) filter (where x_Resource = 'gpu' and x_Borrowed), 0)
            as borrowed_gpu_hours
    from records
    group by all
),

workload_costs as (
    select x_RunId as run_id, BillingPeriodStart as billing_period_start, x_Workload as workload_id,
        sum(EffectiveCost) as cost
    from records
    where x_Workload is not null
    group by all
),

idle_by_cause as (
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        x_IdleReason as idle_reason,
        sum(EffectiveCost) as cost,
        coalesce(sum(PricingQuantity) filter (where x_Resource = 'gpu'), 0) as gpu_hours
    from records
    where x_UsageClass = 'idle'
    group by all
),

metrics as (
    select run_id, billing_period_start, 'total_effective_cost' as metric, 'all' as scope,
        total_cost as value, 'USD' as unit
    from totals
    union all
    select run_id, billing_period_start, 'total_list_cost', 'all', total_list_cost, 'USD' from totals
    union all
    select run_id, billing_period_start, 'capacity_gpu_hours', 'all', capacity_gpu_hours, 'GPU-Hours'
    from totals
    union all
    select run_id, billing_period_start, 'allocated_gpu_hours', 'all', allocated_gpu_hours, 'GPU-Hours'
    from totals
    union all
    select run_id, billing_period_start, 'productive_gpu_hours', 'all', productive_gpu_hours, 'GPU-Hours'
    from totals
    union all
    select run_id, billing_period_start, 'gpu_allocation_rate', 'all',
        allocated_gpu_hours / nullif(capacity_gpu_hours, 0), 'ratio'
    from totals
    union all
    select run_id, billing_period_start, 'cost_per_gpu_hour', 'all',
        gpu_cost / nullif(capacity_gpu_hours, 0), 'USD/GPU-Hour'
    from totals
    union all
    -- everything the GPUs cost, over the GPU-hours that moved work forward
    select run_id, billing_period_start, 'cost_per_useful_gpu_hour', 'all',
        gpu_cost / nullif(productive_gpu_hours, 0), 'USD/GPU-Hour'
    from totals
    union all
    select run_id, billing_period_start, 'preemption_waste_cost', 'all', lost_cost, 'USD' from totals
    union all
    select run_id, billing_period_start, 'preemption_waste_gpu_hours', 'all', lost_gpu_hours, 'GPU-Hours'
    from totals
    union all
    select run_id, billing_period_start, 'gang_wait_cost', 'all', gang_wait_cost, 'USD' from totals
    union all
    select run_id, billing_period_start, 'gang_wait_gpu_hours', 'all', gang_wait_gpu_hours, 'GPU-Hours'
    from totals
    union all
    select run_id, billing_period_start, 'spot_share', 'all',
        spot_gpu_hours / nullif(allocated_gpu_hours, 0), 'ratio'
    from totals
    union all
    select run_id, billing_period_start, 'borrowed_gpu_hours', 'all', borrowed_gpu_hours, 'GPU-Hours'
    from totals
    union all
    select run_id, billing_period_start, 'commitment_utilization', 'all',
        committed_used_gpu_hours / nullif(committed_gpu_hours, 0), 'ratio'
    from totals
    union all
    select run_id, billing_period_start, 'unused_commitment_cost', 'all', unused_commitment_cost, 'USD'
    from totals
    where committed_gpu_hours > 0
    union all
    select run_id, billing_period_start, 'idle_cost', 'cause:' || idle_reason, cost, 'USD'
    from idle_by_cause
    union all
    select run_id, billing_period_start, 'idle_gpu_hours', 'cause:' || idle_reason, gpu_hours, 'GPU-Hours'
    from idle_by_cause
    where idle_reason <> 'unallocated'
    union all
    select run_id, billing_period_start, 'cost_per_workload', 'all', avg(cost), 'USD'
    from workload_costs
    group by all
    union all
    select c.run_id, c.billing_period_start, 'cost_per_workload', 'kind:' || w.kind, avg(c.cost), 'USD'
    from workload_costs as c
    inner join workloads as w using (run_id, workload_id)
    group by all
    union all
    select c.run_id, c.billing_period_start, 'cost_per_training_run', 'all', avg(c.cost), 'USD'
    from workload_costs as c
    inner join workloads as w using (run_id, workload_id)
    where w.kind in ('training', 'fine-tune')
    group by all
),

final as (
    select * from metrics
    where value is not null
    order by run_id, billing_period_start, metric, scope
)

select * from final
