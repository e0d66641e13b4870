-- grain: one row per run × charge period × GPU model × priced resource × idle policy × label key × allocation (the label's value, `__unallocated__`, or `__idle__`) × tenant
-- Allocation by label (docs/cost-model.md, "Allocation by label"; OpenCost's aggregation by
-- `label:<name>`): for every label key some workload of the run carries, the whole bill of the
-- run grouped by that key's value. A workload without the key is under `__unallocated__`
-- (OpenCost's name; the surfaces say "Unlabelled"); the platform line (idle nobody carries
-- under the policy) is `__idle__`. Usage is the workload's own (FOCUS Usage rows); idle shares
-- are int_idle_shares' rows, which name the workload that earned each share; a share billed to
-- a team as a whole (the cause policy's quota owners) follows the team's own usage cost of the
-- cell (run × charge period × GPU model × resource) among its label values, and is
-- `__unallocated__` where the team used nothing there. Per run, idle policy and label key the
-- charged costs add up to Σ EffectiveCost of the Usage rows (audit label_allocation_balances).
-- tenant is the team charged (`__idle__` on the platform line): summed over allocations, a team's
-- rows are its fct_chargeback rows. Reclaim adjustments (fct_chargeback.reclaim_adjustment_cost)
-- are not applied here.
with records as (
    select * from focus_cost_records
    -- the Usage rows: ChargeCategory is derived from x_UsageClass (a virtual column),
    -- the stored column filters at the scan
    where x_UsageClass <> 'commitment_purchase' and x_UsageClass <> 'idle'
),

shares as not materialized (
    select * from int_idle_shares
),

workloads as not materialized (
    select * from stg_workloads
),

runs as not materialized (
    select * from stg_runs
),

phases as not materialized (
    select * from int_run_phases
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

label_keys as (
    select distinct run_id, unnest(map_keys(labels)) as label_key
    from workloads
    where labels is not null
),

label_runs as (
    -- a run whose workloads carry no label has no rows here: its usage and shares are not read
    select distinct run_id from label_keys
),

workload_allocations as (
    -- every workload under every key of its run: its value, or unallocated
    select w.run_id, w.workload_id, w.tenant, k.label_key,
        coalesce(w.labels[k.label_key], '__unallocated__') as allocation
    from workloads as w
    inner join label_keys as k using (run_id)
),

usage as (
    select
        x_RunId as run_id,
        ChargePeriodStart as charge_period_start,
        coalesce(x_GpuModel, '') as gpu_model,
        x_Resource as resource,
        x_Workload as workload_id,
        coalesce(xsum(case when x_Resource = 'gpu' then PricingQuantity end), 0) as gpu_hours,
        xsum(PricingQuantity) as quantity,
        xsum(EffectiveCost) as usage_cost,
        xsum(ListCost) as list_cost
    from records
    where x_RunId in (select run_id from label_runs)
    group by all
),

shares_at as (
    select s.*, pi.charge_period_start
    from shares as s
    inner join period_info as pi using (run_id, period_index)
    where s.run_id in (select run_id from label_runs)
),

team_use as (
    select u.run_id, u.charge_period_start, u.gpu_model, u.resource, a.label_key, a.tenant, a.allocation,
        xsum(u.usage_cost) as cost, xsum(u.quantity) as quantity
    from usage as u
    inner join workload_allocations as a using (run_id, workload_id)
    group by all
),

team_weights as (
    -- how a share billed to a team as a whole splits among the team's label values: by its usage
    -- cost of the cell (by quantity where that cost nothing), as the window policy weighs
    select
        *,
        case when xsum(cost) over team > 0 then cost / xsum(cost) over team
            when xsum(quantity) over team > 0 then quantity / xsum(quantity) over team
            else 0 end as weight
    from team_use
    window team as (partition by run_id, charge_period_start, gpu_model, resource, label_key, tenant)
),

idle_allocations as (
    -- a share a workload earned: that workload's value
    select s.run_id, s.charge_period_start, s.gpu_model, s.resource, s.idle_policy, a.label_key, a.allocation,
        s.tenant, s.idle_quantity as quantity, s.idle_cost as cost, s.idle_list_cost as list_cost
    from shares_at as s
    inner join workload_allocations as a using (run_id, workload_id)
    where s.workload_id is not null
    union all
    -- a share billed to a team as a whole: by the team's use of the cell
    select s.run_id, s.charge_period_start, s.gpu_model, s.resource, s.idle_policy, t.label_key, t.allocation,
        s.tenant, s.idle_quantity * t.weight, s.idle_cost * t.weight, s.idle_list_cost * t.weight
    from shares_at as s
    inner join team_weights as t using (run_id, charge_period_start, gpu_model, resource, tenant)
    where s.workload_id is null and s.tenant <> '__idle__' and t.weight > 0
    union all
    -- ... and where the team used nothing in the cell: unallocated
    select s.run_id, s.charge_period_start, s.gpu_model, s.resource, s.idle_policy, k.label_key,
        '__unallocated__', s.tenant, s.idle_quantity, s.idle_cost, s.idle_list_cost
    from shares_at as s
    inner join label_keys as k using (run_id)
    where s.workload_id is null and s.tenant <> '__idle__'
        and not exists (
            select 1 from team_weights as t
            where t.run_id = s.run_id and t.charge_period_start = s.charge_period_start
                and t.gpu_model = s.gpu_model and t.resource = s.resource and t.tenant = s.tenant
                and t.label_key = k.label_key and t.weight > 0
        )
    union all
    -- the platform line
    select s.run_id, s.charge_period_start, s.gpu_model, s.resource, s.idle_policy, k.label_key,
        '__idle__', s.tenant, s.idle_quantity, s.idle_cost, s.idle_list_cost
    from shares_at as s
    inner join label_keys as k using (run_id)
    where s.workload_id is null and s.tenant = '__idle__'
),

combined as (
    select u.run_id, u.charge_period_start, u.gpu_model, u.resource, p.idle_policy, a.label_key, a.allocation,
        a.tenant, u.gpu_hours, u.usage_cost, u.list_cost,
        0.0 as idle_share_quantity, 0.0 as idle_share_cost, 0.0 as idle_share_list_cost
    from usage as u
    inner join workload_allocations as a using (run_id, workload_id)
    cross join policies as p
    union all
    select run_id, charge_period_start, gpu_model, resource, idle_policy, label_key, allocation,
        tenant, 0.0, 0.0, 0.0, quantity, cost, list_cost
    from idle_allocations
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
        c.label_key,
        c.allocation,
        c.tenant,
        xsum(c.gpu_hours) as gpu_hours,
        xsum(c.usage_cost) as usage_cost,
        xsum(c.list_cost) as list_cost,
        case when c.resource = 'gpu' then xsum(c.idle_share_quantity) else 0.0 end as idle_share_gpu_hours,
        xsum(c.idle_share_quantity) as idle_share_quantity,
        xsum(c.idle_share_cost) as idle_share_cost,
        xsum(c.idle_share_list_cost) as idle_share_list_cost,
        xsum(c.usage_cost) + xsum(c.idle_share_cost) as charged_cost
    from combined as c
    inner join period_info as pi
        on pi.run_id = c.run_id and pi.charge_period_start = c.charge_period_start
    group by c.run_id, c.charge_period_start, c.gpu_model, c.resource, c.idle_policy, c.label_key, c.allocation,
        c.tenant
    order by c.run_id, c.charge_period_start, c.gpu_model, c.resource, c.idle_policy, c.label_key, c.allocation,
        c.tenant
)

select * from final
