-- title: Allocation rate per day and GPU model
-- question: What share of each GPU model's capacity was held by a workload, day by day?
SELECT run_id, charge_period_start::DATE AS day, gpu_model,
       round(sum(gpu_hours), 1) AS capacity_gpu_hours,
       round(100 * sum(gpu_hours) FILTER (WHERE usage_class <> 'idle') / sum(gpu_hours), 1)
           AS allocation_pct
FROM fct_usage_hourly
GROUP BY ALL
ORDER BY run_id, day, gpu_model
