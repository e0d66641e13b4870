-- grain: one row per run × charge period × GPU model × priced resource × idle policy × tenant (plus `__idle__`, the platform line)
-- THE showback/chargeback table: the dashboard, the reports and the saved queries read it, and
-- fct_showback rolls it up per month. usage_cost is what the team's workloads held; the idle
-- policy (int_idle_shares: separate, window, node, cause) says who carries the idle capacity:
-- idle_share_cost. charged_cost = usage_cost + idle_share_cost, and per cell, policy and run
-- the charged costs add up to Σ EffectiveCost (audit chargeback_balances).
-- reclaim_adjustment_cost is the reclaim option: lost work of a workload preempted by another
-- ClusterQueue (Kueue's reclaim within the cohort; another team where no queue is known) moves
-- to the preemptor's team: − on the victim's row, + on the reclaimer's; add it to charged_cost.
-- gpu_model is the node's (null for CPU-only nodes).
-- Sums are exact (xsum, models/macros.sql): a hash join hands rows on in an order that varies
-- between builds and threads, and floating-point addition is not associative (docs/performance.md).
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

shares as not materialized (
    select * from int_idle_shares
),

runs as not materialized (
    select * from stg_runs
),

phases as not materialized (
    select * from int_run_phases
),

preemptions as not materialized (
    select * from int_preemptions
),

period_info as (
    select
        r.run_id,
        k as period_index,
        ts_at(r.start_ts, k * r.charge_period_s) as charge_period_start,
        date_trunc('month', ts_at(r.start_ts, k * r.charge_period_s)) as billing_period_start,
        phase_of(k * r.charge_period_s, ph.warmup_end_s, ph.drain_start_s) as phase
    from runs as r
    inner join phases as ph using (run_id),
        unnest(range(0, cast(ceil(r.horizon_s / r.charge_period_s) as bigint))) as t(k)
),

policies as (
    select unnest(['separate', 'window', 'node', 'cause']) as idle_policy
),

usage as (
    select
        x_RunId as run_id,
        ChargePeriodStart as charge_period_start,
        coalesce(x_GpuModel, '') as gpu_model,
        x_Resource as resource,
        x_Tenant as tenant,
        coalesce(xsum(case when x_Resource = 'gpu' then PricingQuantity end), 0) as gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass = 'productive' then PricingQuantity end), 0)
            as productive_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass = 'gang_wait' then PricingQuantity end), 0)
            as gang_wait_gpu_hours,
        coalesce(xsum(case when x_Resource = 'gpu' and x_UsageClass = 'lost_to_preemption' then PricingQuantity end), 0) as lost_gpu_hours,
        xsum(EffectiveCost) as usage_cost,
        xsum(ListCost) as list_cost,
        coalesce(xsum(case when x_UsageClass = 'productive' then EffectiveCost end), 0) as productive_cost,
        coalesce(xsum(case when x_UsageClass = 'gang_wait' then EffectiveCost end), 0) as gang_wait_cost,
        coalesce(xsum(case when x_UsageClass = 'lost_to_preemption' then EffectiveCost end), 0)
            as preemption_waste_cost
    from records
    where x_UsageClass <> 'idle'
    group by all
),

reclaimed as (
    -- lost work whose eviction made room for another queue's (or, without queues, team's)
    -- workload: int_preemptions.reclaim
    select
        r.x_RunId as run_id,
        r.ChargePeriodStart as charge_period_start,
        coalesce(r.x_GpuModel, '') as gpu_model,
        r.x_Resource as resource,
        r.x_Tenant as victim_tenant,
        r.x_PreemptedByTenant as reclaimer_tenant,
        xsum(r.EffectiveCost) as cost
    from records as r
    inner join preemptions as p
        on p.run_id = r.x_RunId and p.workload_id = r.x_Workload and p.preemptor = r.x_PreemptedBy
    where r.x_UsageClass = 'lost_to_preemption' and p.reclaim and r.x_PreemptedByTenant is not null
    group by all
),

reclaim_moves as (
    select run_id, charge_period_start, gpu_model, resource, victim_tenant as tenant,
        -cost as reclaim_adjustment_cost
    from reclaimed
    union all
    select run_id, charge_period_start, gpu_model, resource, reclaimer_tenant, cost
    from reclaimed
),

idle_rows as (
    select
        s.run_id,
        pi.charge_period_start,
        s.gpu_model,
        s.resource,
        s.idle_policy,
        s.tenant,
        xsum(s.idle_quantity) as idle_share_quantity,
        xsum(s.idle_cost) as idle_share_cost,
        xsum(s.idle_list_cost) as idle_share_list_cost
    from shares as s
    inner join period_info as pi using (run_id, period_index)
    group by all
),

combined as (
    select u.*, p.idle_policy from usage as u cross join policies as p
    union all by name
    select * from idle_rows
    union all by name
    select m.*, p.idle_policy from reclaim_moves as m cross join policies as p
),

final as (
    select
        c.run_id,
        c.charge_period_start,
        any_value(pi.billing_period_start) as billing_period_start,
        any_value(pi.phase) as phase,
        nullif(c.gpu_model, '') as gpu_model,
        c.resource,
        c.idle_policy,
        c.tenant,
        coalesce(xsum(c.gpu_hours), 0) as gpu_hours,
        coalesce(xsum(c.productive_gpu_hours), 0) as productive_gpu_hours,
        coalesce(xsum(c.gang_wait_gpu_hours), 0) as gang_wait_gpu_hours,
        coalesce(xsum(c.lost_gpu_hours), 0) as lost_gpu_hours,
        coalesce(xsum(c.usage_cost), 0) as usage_cost,
        coalesce(xsum(c.list_cost), 0) as list_cost,
        coalesce(xsum(c.productive_cost), 0) as productive_cost,
        coalesce(xsum(c.gang_wait_cost), 0) as gang_wait_cost,
        coalesce(xsum(c.preemption_waste_cost), 0) as preemption_waste_cost,
        -- GPU-hours of idle capacity carried (GPU rows; CPU and memory in idle_share_quantity)
        case when c.resource = 'gpu' then coalesce(xsum(c.idle_share_quantity), 0) else 0.0 end
            as idle_share_gpu_hours,
        coalesce(xsum(c.idle_share_quantity), 0) as idle_share_quantity,
        coalesce(xsum(c.idle_share_cost), 0) as idle_share_cost,
        coalesce(xsum(c.idle_share_list_cost), 0) as idle_share_list_cost,
        coalesce(xsum(c.usage_cost), 0) + coalesce(xsum(c.idle_share_cost), 0) as charged_cost,
        coalesce(xsum(c.reclaim_adjustment_cost), 0) as reclaim_adjustment_cost
    from combined as c
    inner join period_info as pi
        on pi.run_id = c.run_id and pi.charge_period_start = c.charge_period_start
    group by c.run_id, c.charge_period_start, c.gpu_model, c.resource, c.idle_policy, c.tenant
    order by c.run_id, c.charge_period_start, c.gpu_model, c.resource, c.idle_policy, c.tenant
)

select * from final
