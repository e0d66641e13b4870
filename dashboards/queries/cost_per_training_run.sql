-- title: Cost per training run, finished or failed
-- question: What did a training run cost, with its share of idle capacity, when it finished, when it failed (held GPUs and ended without finishing) and when it was still going at the end of the run?
SELECT run_id, outcome, count(*) AS runs,
       round(avg(effective_cost), 2) AS own_cost_per_run,
       round(avg(idle_share_cost), 2) AS idle_share_per_run,
       round(avg(cost_with_idle), 2) AS cost_per_run,
       round(sum(cost_with_idle), 2) AS total_cost,
       round(sum(gpu_hours_productive), 1) AS productive_gpu_hours
FROM fct_workloads
WHERE kind IN ('training', 'fine-tune') AND outcome <> 'unservable'
GROUP BY run_id, outcome
ORDER BY run_id, CASE outcome WHEN 'finished' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END
