-- title: Idle cost by cause
-- question: How many GPU-hours sat idle in the steady phase, why, and what did they cost? Partially placed gangs (gang_wait) are listed too: held, but as wasted as idle. Count capacity with PricingQuantity: idle rows consume nothing.
SELECT x_RunId AS run_id,
       CASE WHEN x_UsageClass = 'idle' THEN x_IdleReason
            ELSE 'gang_wait (partial placement)' END AS cause,
       round(sum(PricingQuantity) FILTER (WHERE x_Resource = 'gpu'), 1) AS gpu_hours,
       round(sum(EffectiveCost), 2) AS effective_cost,
       round(100 * sum(EffectiveCost)
             / sum(sum(EffectiveCost)) OVER (PARTITION BY x_RunId), 1) AS pct_of_waste_cost
FROM focus_cost_records
WHERE ChargeCategory = 'Usage' AND x_UsageClass IN ('idle', 'gang_wait') AND x_Phase = 'steady'
GROUP BY x_RunId, cause
ORDER BY run_id, effective_cost DESC
