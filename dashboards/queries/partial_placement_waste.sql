-- title: Partial placement waste per team
-- question: How many GPU-hours did gangs hold while waiting for their last pods, per team and run (the waste gang scheduling removes)?
SELECT x_RunId AS run_id, x_Tenant AS team,
       count(DISTINCT x_Workload) AS workloads,
       round(sum(ConsumedQuantity) FILTER (WHERE x_Resource = 'gpu'), 1) AS gang_wait_gpu_hours,
       round(sum(EffectiveCost), 2) AS gang_wait_cost
FROM focus_cost_records
WHERE ChargeCategory = 'Usage' AND x_UsageClass = 'gang_wait'
GROUP BY ALL
ORDER BY run_id, gang_wait_cost DESC
