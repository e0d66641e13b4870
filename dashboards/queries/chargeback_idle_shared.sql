-- title: Chargeback per team, idle shared by hour and GPU model
-- question: What is each team charged in the steady phase of each run: its own usage plus the idle capacity of the charge periods and GPU models it used, in proportion to its cost there? The fct_chargeback mart holds the one rule the Teams page and the reports use; the other columns are the same bill by node, by idle cause, and with the reclaiming team paying for the work its reclaim threw away. Unallocated (idle) is the platform line: idle nobody used around.
SELECT run_id, CASE tenant WHEN '__idle__' THEN 'Unallocated (idle)' ELSE tenant END AS team,
       round(sum(usage_cost) FILTER (WHERE idle_policy = 'window'), 2) AS usage_cost,
       round(sum(idle_share_cost) FILTER (WHERE idle_policy = 'window'), 2) AS idle_share_cost,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'window'), 2) AS charged_cost,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'node'), 2) AS charged_by_node,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'cause'), 2) AS charged_by_cause,
       round(sum(charged_cost + reclaim_adjustment_cost) FILTER (WHERE idle_policy = 'window'), 2)
           AS charged_reclaimer_pays
FROM fct_chargeback
WHERE phase = 'steady'
GROUP BY run_id, tenant
ORDER BY run_id, tenant = '__idle__', charged_cost DESC
