-- grain: one row per run × billing period × tenant (plus `__idle__`): showback with idle separate, chargeback with idle shared
-- fct_chargeback rolled up per month (one rule, int_idle_shares). cost_idle_separate: a team's own
-- usage, all idle on the `__idle__` row (showback); cost_idle_shared: plus its share of idle by
-- window (per charge period × GPU model × resource, in proportion to its cost there; idle of
-- cells nobody used stays on `__idle__`); cost_idle_by_node and cost_idle_by_cause: the same
-- under the node and cause policies; reclaim_adjustment_cost: the reclaim option. Every cost
-- column sums to Σ EffectiveCost of the Usage rows (audit showback_balances).
with chargeback as (
    select * from fct_chargeback
),

final as (
    select
        run_id,
        billing_period_start,
        billing_period_start + interval 1 month as billing_period_end,
        tenant,
        xsum(case when idle_policy = 'separate' then gpu_hours end)
            + xsum(case when idle_policy = 'separate' then idle_share_gpu_hours end) as gpu_hours,
        xsum(case when idle_policy = 'separate' then list_cost end)
            + xsum(case when idle_policy = 'separate' then idle_share_list_cost end) as list_cost,
        xsum(case when idle_policy = 'separate' then productive_cost end) as productive_cost,
        xsum(case when idle_policy = 'separate' then gang_wait_cost end) as gang_wait_cost,
        xsum(case when idle_policy = 'separate' then preemption_waste_cost end) as preemption_waste_cost,
        xsum(case when idle_policy = 'separate' then charged_cost end) as cost_idle_separate,
        coalesce(xsum(case when idle_policy = 'window' and tenant <> '__idle__' then idle_share_cost end), 0)
            as idle_share,
        xsum(case when idle_policy = 'window' then charged_cost end) as cost_idle_shared,
        xsum(case when idle_policy = 'node' then charged_cost end) as cost_idle_by_node,
        xsum(case when idle_policy = 'cause' then charged_cost end) as cost_idle_by_cause,
        xsum(case when idle_policy = 'separate' then reclaim_adjustment_cost end) as reclaim_adjustment_cost
    from chargeback
    group by run_id, billing_period_start, tenant
    order by run_id, billing_period_start, tenant
)

select * from final
