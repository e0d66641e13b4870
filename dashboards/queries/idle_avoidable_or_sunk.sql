-- title: Idle cost, avoidable or sunk
-- question: Of the idle GPU capacity in each phase, how much could have been given back (nodes paid by the hour: on-demand and spot) and how much was paid whatever happened (Committed nodes)?
SELECT run_id, phase,
       CASE WHEN pricing_category = 'Committed' THEN 'sunk' ELSE 'avoidable' END AS kind,
       round(sum(gpu_hours), 1) AS idle_gpu_hours,
       round(sum(effective_cost), 2) AS idle_cost
FROM fct_usage_hourly
WHERE usage_class = 'idle' AND resource = 'gpu'
GROUP BY ALL
ORDER BY run_id, phase, kind
