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
        sum(gpu_hours) filter (where idle_policy = 'separate')
            + sum(idle_share_gpu_hours) filter (where idle_policy = 'separate') as gpu_hours,
        sum(list_cost) filter (where idle_policy = 'separate')
            + sum(idle_share_list_cost) filter (where idle_policy = 'separate') as list_cost,
        sum(productive_cost) filter (where idle_policy = 'separate') as productive_cost,
        sum(gang_wait_cost) filter (where idle_policy = 'separate') as gang_wait_cost,
        sum(preemption_waste_cost) filter (where idle_policy = 'separate') as preemption_waste_cost,
        sum(charged_cost) filter (where idle_policy = 'separate') as cost_idle_separate,
        coalesce(sum(idle_share_cost) filter (where idle_policy = 'window' and tenant <> '__idle__'), 0)
            as idle_share,
        sum(charged_cost) filter (where idle_policy = 'window') as cost_idle_shared,
        sum(charged_cost) filter (where idle_policy = 'node') as cost_idle_by_node,
        sum(charged_cost) filter (where idle_policy = 'cause') as cost_idle_by_cause,
        sum(reclaim_adjustment_cost) filter (where idle_policy = 'separate') as reclaim_adjustment_cost
    from chargeback
    group by run_id, billing_period_start, tenant
    order by run_id, billing_period_start, tenant
)

select * from final
