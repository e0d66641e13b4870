-- title: Allocation rate by run phase
-- question: What share of the GPU capacity was held by workloads while the trace was submitting work (steady), while the cluster filled (warm-up) and while it drained after the last submission? The whole-run figure mixes them.
SELECT run_id, phase,
       round(sum(gpu_hours), 1) AS capacity_gpu_hours,
       round(sum(gpu_hours) FILTER (WHERE usage_class <> 'idle'), 1) AS allocated_gpu_hours,
       round(100 * sum(gpu_hours) FILTER (WHERE usage_class <> 'idle') / sum(gpu_hours), 1)
           AS allocation_pct,
       round(sum(effective_cost), 2) AS effective_cost
FROM fct_usage_hourly
GROUP BY run_id, phase
ORDER BY run_id, CASE phase WHEN 'warmup' THEN 0 WHEN 'steady' THEN 1 ELSE 2 END
