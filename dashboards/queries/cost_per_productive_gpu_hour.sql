-- title: True cost of a useful GPU-hour per team
-- question: What does each team pay per productive GPU-hour once its waste (gang_wait, lost work) is counted?
SELECT x_RunId AS run_id, x_Tenant AS team,
       round(sum(ConsumedQuantity) FILTER (WHERE x_UsageClass = 'productive' AND x_Resource = 'gpu'), 1)
           AS productive_gpu_hours,
       round(sum(EffectiveCost), 2) AS effective_cost,
       round(sum(EffectiveCost)
             / nullif(sum(ConsumedQuantity) FILTER (
                 WHERE x_UsageClass = 'productive' AND x_Resource = 'gpu'), 0), 2)
           AS usd_per_productive_gpu_hour
FROM focus_cost_records
WHERE ChargeCategory = 'Usage' AND x_UsageClass <> 'idle'
GROUP BY ALL
ORDER BY run_id, usd_per_productive_gpu_hour DESC
