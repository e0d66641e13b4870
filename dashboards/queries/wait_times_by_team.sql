-- title: Wait times per team
-- question: How long do each team's workloads wait from submission to their first running pod (median and p95, hours)?
SELECT run_id, tenant AS team, count(*) AS workloads,
       round(median(wait_s) / 3600, 2) AS median_wait_h,
       round(quantile_cont(wait_s, 0.95) / 3600, 2) AS p95_wait_h,
       count(*) FILTER (WHERE final_state = 'pending_at_end') AS still_pending
FROM fct_workloads
WHERE final_state <> 'rejected'
GROUP BY ALL
ORDER BY run_id, p95_wait_h DESC
