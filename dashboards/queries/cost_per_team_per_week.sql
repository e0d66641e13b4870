-- title: Cost per team per week
-- question: What does each team's GPU time cost, week by week? Idle capacity is its own line, Unallocated (idle); costs add up GPU, CPU and memory; GPU-hours are PricingQuantity, the capacity each row prices.
SELECT x_RunId AS run_id,
       date_trunc('week', ChargePeriodStart)::DATE AS week,
       CASE x_Tenant WHEN '__idle__' THEN 'Unallocated (idle)' ELSE x_Tenant END AS team,
       round(sum(PricingQuantity) FILTER (WHERE x_Resource = 'gpu'), 1) AS gpu_hours,
       round(sum(EffectiveCost), 2) AS effective_cost,
       round(sum(ListCost), 2) AS list_cost
FROM focus_cost_records
WHERE ChargeCategory = 'Usage'
GROUP BY ALL
ORDER BY run_id, week, effective_cost DESC
