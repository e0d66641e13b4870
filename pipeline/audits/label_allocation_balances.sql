-- per run, idle policy and label key: the charged costs in fct_label_allocation add up to Σ EffectiveCost of the run's Usage rows, each team's to its fct_chargeback charged cost, and no allocation is charged a negative idle share (tolerance 1e-9 relative)
with allocation as (
    select * from fct_label_allocation
),

chargeback as (
    select * from fct_chargeback
),

records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

keys as (
    select distinct run_id, label_key from allocation
),

totals as (
    select x_RunId as run_id, sum(EffectiveCost) as total
    from records
    group by all
),

charged as (
    select run_id, idle_policy, label_key, sum(charged_cost) as charged, min(idle_share_cost) as least_share
    from allocation
    group by all
),

expected as (
    select t.run_id, t.total, k.label_key, p.idle_policy
    from totals as t
    inner join keys as k using (run_id)
    cross join (select unnest(['separate', 'window', 'node', 'cause']) as idle_policy) as p
),

run_violations as (
    select e.run_id, e.idle_policy, e.label_key, cast(null as varchar) as tenant,
        e.total as expected, c.charged
    from expected as e
    full outer join charged as c using (run_id, idle_policy, label_key)
    where abs(coalesce(e.total, 0) - coalesce(c.charged, 0)) > 1e-9 * greatest(1, abs(coalesce(e.total, 0)))
        or c.least_share < -1e-12
),

team_charged as (
    select run_id, idle_policy, label_key, tenant, sum(charged_cost) as charged
    from allocation
    group by all
),

team_expected as (
    select c.run_id, c.idle_policy, k.label_key, c.tenant, sum(c.charged_cost) as total
    from chargeback as c
    inner join keys as k using (run_id)
    group by all
    having sum(abs(c.charged_cost)) > 0
),

team_violations as (
    select run_id, idle_policy, label_key, tenant, e.total as expected, c.charged
    from team_expected as e
    full outer join team_charged as c using (run_id, idle_policy, label_key, tenant)
    where abs(coalesce(e.total, 0) - coalesce(c.charged, 0)) > 1e-9 * greatest(1, abs(coalesce(e.total, 0)))
),

final as (
    select * from run_violations
    union all
    select * from team_violations
)

select * from final
