-- title: Cost of preemption waste
-- question: How much work was thrown away by preemption (since the victims' last checkpoint), per team, and what did it cost?
SELECT x_RunId AS run_id, x_Tenant AS team,
       count(DISTINCT x_Workload) AS victim_workloads,
       round(sum(ConsumedQuantity) FILTER (WHERE x_Resource = 'gpu'), 1) AS lost_gpu_hours,
       round(sum(EffectiveCost), 2) AS lost_cost
FROM focus_cost_records
WHERE ChargeCategory = 'Usage' AND x_UsageClass = 'lost_to_preemption'
GROUP BY ALL
ORDER BY run_id, lost_cost DESC
