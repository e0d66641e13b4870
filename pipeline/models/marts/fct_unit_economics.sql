-- grain: one row per run × billing period × metric × scope (FinOps-for-AI unit economics, long format)
-- scope is `all`, `cause:<idle reason>`, `kind:<workload kind>`, `outcome:<outcome>`,
-- `phase:<run phase>` or `idle:avoidable|sunk`; units are USD, GPU-Hours, USD/GPU-Hour, count
-- or ratio. A metric whose denominator is zero is left out. Training runs are workloads of kind
-- `training` or `fine-tune`; their cost includes their share of idle capacity (`window` rule).
-- Definitions: docs/cost-model.md §6.
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

workloads as not materialized (
    select * from stg_workloads
),

workload_marts as not materialized (
    select * from fct_workloads
),

evictions as not materialized (
    select * from fct_evictions
),

unservable as not materialized (
    select * from fct_unservable_demand
),

commitment_pools as not materialized (
    select * from fct_commitment_utilization
),

pending as not materialized (
    select * from int_pending_demand_capped
),

runs as not materialized (
    select * from stg_runs
),

totals as (
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        xsum(EffectiveCost) as total_cost,
        xsum(ListCost) as total_list_cost,
        xsum(ContractedCost) as total_contracted_cost,
        xsum(case when x_Resource = 'gpu' then EffectiveCost end) as gpu_cost,
        xsum(case when x_Resource = 'gpu' then PricingQuantity end) as capacity_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass <> 'idle' then PricingQuantity end), 0)
            as allocated_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass = 'productive' then PricingQuantity end), 0)
            as productive_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass = 'gang_wait' then PricingQuantity end), 0)
            as gang_wait_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass = 'lost_to_preemption' then PricingQuantity end), 0) as lost_gpu_hours,
        coalesce(xsum(case when x_UsageClass = 'gang_wait' then EffectiveCost end), 0) as gang_wait_cost,
        coalesce(xsum(case when x_UsageClass = 'lost_to_preemption' then EffectiveCost end), 0) as lost_cost,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass <> 'idle' and PricingCategory = 'Dynamic' then PricingQuantity end), 0)
            as spot_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and CommitmentDiscountStatus = 'Used' then PricingQuantity end), 0) as committed_used_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and CommitmentDiscountId is not null then PricingQuantity end), 0) as committed_gpu_hours,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Unused' then EffectiveCost end), 0)
            as unused_commitment_cost,
        coalesce(xsum(case when x_Resource = 'gpu' and x_Borrowed then PricingQuantity end), 0)
            as borrowed_gpu_hours
    from records
    group by all
),

idle_kinds as (
    -- idle capacity on nodes paid by the hour can be given back (avoidable); on Committed nodes it
    -- is paid whatever happens (sunk)
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        case when PricingCategory = 'Committed' then 'sunk' else 'avoidable' end as kind,
        xsum(EffectiveCost) as cost,
        coalesce(xsum(case when x_Resource = 'gpu' then PricingQuantity end), 0) as gpu_hours
    from records
    where x_UsageClass = 'idle'
    group by all
),

phase_totals as (
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        x_Phase as phase,
        xsum(case when x_Resource = 'gpu' then PricingQuantity end) as capacity_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass <> 'idle' then PricingQuantity end), 0)
            as allocated_gpu_hours
    from records
    group by all
),

training_runs as (
    select
        w.run_id,
        date_trunc('month', w.submit_ts) as billing_period_start,
        w.outcome,
        w.cost_with_idle
    from workload_marts as w
    where w.kind in ('training', 'fine-tune') and w.outcome <> 'unservable'
),

eviction_losses as (
    select run_id, date_trunc('month', evicted_ts) as billing_period_start,
        count(*) as evictions, xavg(lost_cost) as lost_cost, xavg(lost_gpu_hours) as lost_gpu_hours
    from evictions
    group by all
),

pending_demand as (
    -- GPU-hours demanded while pending, capped by what the cluster could have run
    -- (int_pending_demand_capped), per month of the charge period
    select
        p.run_id,
        date_trunc('month', ts_at(r.start_ts, p.period_index * r.charge_period_s)) as billing_period_start,
        xsum(p.gpu_hours) as gpu_hours,
        xsum(p.list_value) as list_value
    from pending as p
    inner join runs as r using (run_id)
    group by all
),

unservable_asked as (
    select run_id, date_trunc('month', submit_ts) as billing_period_start,
        count(*) as workloads, xsum(asked_gpu_hours) as asked_gpu_hours,
        xsum(waited_gpu_hours) as waited_gpu_hours
    from unservable
    group by all
),

coverage as (
    select run_id, billing_period_start,
        xsum(case when resource = 'gpu' then used_quantity end) as covered,
        xsum(case when resource = 'gpu' then eligible_quantity end) as eligible,
        xsum(case when resource = 'gpu' then coverable_on_demand_quantity end) as coverable,
        xsum(coverable_on_demand_cost) as coverable_cost
    from commitment_pools
    group by all
),

workload_costs as (
    select x_RunId as run_id, BillingPeriodStart as billing_period_start, x_Workload as workload_id,
        xsum(EffectiveCost) as cost
    from records
    where x_Workload is not null
    group by all
),

idle_by_cause as (
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        x_IdleReason as idle_reason,
        xsum(EffectiveCost) as cost,
        coalesce(xsum(case when x_Resource = 'gpu' then PricingQuantity end), 0) as gpu_hours
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
    -- FinOps' effective savings rate over the capacity paid, idle included (where pods landed
    -- does not move it): (ListCost − EffectiveCost) ÷ ListCost
    select run_id, billing_period_start, 'effective_savings_rate', 'all',
        (total_list_cost - total_cost) / nullif(total_list_cost, 0), 'ratio'
    from totals
    union all
    select run_id, billing_period_start, 'total_contracted_cost', 'all', total_contracted_cost, 'USD'
    from totals
    union all
    -- the commitments' part alone: (ContractedCost − EffectiveCost) ÷ ContractedCost
    select run_id, billing_period_start, 'commitment_savings_rate', 'all',
        (total_contracted_cost - total_cost) / nullif(total_contracted_cost, 0), 'ratio'
    from totals
    union all
    select run_id, billing_period_start, 'idle_cost', 'idle:' || kind, cost, 'USD' from idle_kinds
    union all
    select run_id, billing_period_start, 'idle_gpu_hours', 'idle:' || kind, gpu_hours, 'GPU-Hours'
    from idle_kinds
    union all
    select run_id, billing_period_start, 'gpu_allocation_rate', 'phase:' || phase,
        allocated_gpu_hours / nullif(capacity_gpu_hours, 0), 'ratio'
    from phase_totals
    union all
    select run_id, billing_period_start, 'capacity_gpu_hours', 'phase:' || phase, capacity_gpu_hours,
        'GPU-Hours'
    from phase_totals
    union all
    -- demand, not spend: what the pending GPU-hours would have cost at list price
    select run_id, billing_period_start, 'pending_demand_gpu_hours', 'all', gpu_hours, 'GPU-Hours'
    from pending_demand
    union all
    select run_id, billing_period_start, 'pending_demand_list_value', 'all', list_value, 'USD'
    from pending_demand
    union all
    select run_id, billing_period_start, 'unservable_workloads', 'all', workloads, 'count'
    from unservable_asked
    union all
    select run_id, billing_period_start, 'unservable_gpu_hours_asked', 'all', asked_gpu_hours, 'GPU-Hours'
    from unservable_asked
    union all
    -- reported apart from pending demand: demand the cluster could never run
    select run_id, billing_period_start, 'unservable_gpu_hours_waited', 'all', waited_gpu_hours, 'GPU-Hours'
    from unservable_asked
    union all
    select run_id, billing_period_start, 'evictions', 'all', evictions, 'count' from eviction_losses
    union all
    select run_id, billing_period_start, 'checkpoint_loss_per_eviction', 'all', lost_cost, 'USD'
    from eviction_losses
    union all
    select run_id, billing_period_start, 'checkpoint_loss_gpu_hours_per_eviction', 'all', lost_gpu_hours,
        'GPU-Hours'
    from eviction_losses
    union all
    -- covered ÷ commitment-eligible GPU-hours used (fct_commitment_utilization's coverage:
    -- committed hours used ÷ those + on-demand hours used; spot and Unused rows are not in it)
    select run_id, billing_period_start, 'commitment_coverage', 'all', covered / nullif(eligible, 0),
        'ratio'
    from coverage
    union all
    select run_id, billing_period_start, 'coverable_on_demand_gpu_hours', 'all', coverable, 'GPU-Hours'
    from coverage
    union all
    select run_id, billing_period_start, 'coverable_on_demand_cost', 'all', coverable_cost, 'USD'
    from coverage
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
    select run_id, billing_period_start, 'cost_per_workload', 'all', xavg(cost), 'USD'
    from workload_costs
    group by all
    union all
    select c.run_id, c.billing_period_start, 'cost_per_workload', 'kind:' || w.kind, xavg(c.cost), 'USD'
    from workload_costs as c
    inner join workloads as w using (run_id, workload_id)
    group by all
    union all
    -- with its share of idle capacity, per month of submission
    select run_id, billing_period_start, 'cost_per_training_run', 'all', xavg(cost_with_idle), 'USD'
    from training_runs
    group by all
    union all
    select run_id, billing_period_start, 'cost_per_training_run', 'outcome:' || outcome,
        xavg(cost_with_idle), 'USD'
    from training_runs
    group by all
    union all
    select run_id, billing_period_start, 'training_runs', 'outcome:' || outcome, count(*), 'count'
    from training_runs
    group by all
),

final as (
    select * from metrics
    where value is not null
    order by run_id, billing_period_start, metric, scope
)

select * from final
