-- title: Commitment utilization and coverage
-- question: How much of each pool of committed (prepaid) capacity was used, what did the unused part cost, how much of the SKU's usage did it cover, and how many on-demand hours could it have carried while it sat idle?
SELECT run_id, sku_id, nodes, billing_period_start::DATE AS month,
       round(committed_quantity, 1) AS committed_hours,
       round(used_quantity, 1) AS used_hours,
       round(100 * utilization, 1) AS utilization_pct,
       round(unused_cost, 2) AS unused_commitment_cost,
       round(100 * coverage, 1) AS coverage_pct,
       round(coverable_on_demand_quantity, 1) AS coverable_on_demand_hours,
       round(coverable_on_demand_cost, 2) AS coverable_on_demand_cost
FROM fct_commitment_utilization
ORDER BY run_id, sku_id, month
