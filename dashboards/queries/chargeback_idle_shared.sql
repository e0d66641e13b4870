-- title: Chargeback with idle capacity shared back
-- question: What should each team be charged if the cost of idle capacity is shared back in proportion to each team's cost of that resource (GPU, CPU, memory) in the run? The dashboard's "shared" idle policy; the fct_showback mart applies the same rule per billing month.
WITH used AS (
    SELECT run_id, tenant, resource, sum(effective_cost) AS cost
    FROM fct_usage_hourly
    WHERE usage_class <> 'idle'
    GROUP BY ALL
),
idle AS (
    SELECT run_id, resource, sum(effective_cost) AS idle_cost
    FROM fct_usage_hourly
    WHERE usage_class = 'idle'
    GROUP BY ALL
),
shared AS (
    SELECT u.run_id, u.tenant, u.cost,
           coalesce(i.idle_cost, 0) * u.cost
               / nullif(sum(u.cost) OVER (PARTITION BY u.run_id, u.resource), 0) AS idle_share
    FROM used u
    LEFT JOIN idle i USING (run_id, resource)
)
SELECT run_id, tenant AS team,
       round(sum(cost), 2) AS usage_cost,
       round(sum(coalesce(idle_share, 0)), 2) AS idle_share_cost,
       round(sum(cost) + sum(coalesce(idle_share, 0)), 2) AS charged_cost
FROM shared
GROUP BY ALL
ORDER BY run_id, charged_cost DESC
