-- title: Commitment utilization
-- question: How much of the committed (prepaid) GPU capacity was used, and what did the unused part cost? (The fct_commitment_utilization mart has it per commitment and month, CPU and memory too.)
SELECT x_RunId AS run_id, x_GpuModel AS gpu_model,
       round(sum(ConsumedQuantity), 1) AS committed_gpu_hours,
       round(sum(ConsumedQuantity) FILTER (WHERE x_UsageClass <> 'idle'), 1) AS used_gpu_hours,
       round(100 * sum(ConsumedQuantity) FILTER (WHERE x_UsageClass <> 'idle')
             / sum(ConsumedQuantity), 1) AS utilization_pct,
       round(sum(EffectiveCost) FILTER (WHERE x_UsageClass = 'idle'), 2) AS unused_commitment_cost
FROM focus_cost_records
WHERE ChargeCategory = 'Usage' AND PricingCategory = 'Committed' AND x_Resource = 'gpu'
GROUP BY ALL
ORDER BY run_id, gpu_model
