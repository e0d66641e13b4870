-- title: Cost of waiting per team
-- question: How many GPU-hours did each team's workloads ask for while they waited to run (for quota, for placement, or not yet tried), and what would those GPU-hours cost at the list price of their GPU model?
SELECT run_id, tenant AS team,
       count(*) FILTER (WHERE wait_gpu_hours > 0) AS workloads_that_waited,
       round(sum(wait_gpu_hours), 1) AS wait_gpu_hours,
       round(sum(wait_cost), 2) AS wait_cost,
       round(median(wait_s) FILTER (WHERE wait_gpu_hours > 0) / 3600, 2) AS median_wait_h
FROM fct_workloads
WHERE outcome <> 'unservable'
GROUP BY ALL
ORDER BY run_id, wait_cost DESC
