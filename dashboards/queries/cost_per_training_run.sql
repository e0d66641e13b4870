-- title: Cost per training run
-- question: What did each training job cost, and how much of it was useful work?
SELECT w.run_id, w.workload_id, w.tenant AS team, w.pods, w.gpus_per_pod, w.final_state,
       round(w.gpu_hours_productive, 1) AS productive_gpu_hours,
       round(w.gpu_hours_gang_wait + w.gpu_hours_lost, 1) AS wasted_gpu_hours,
       round(w.effective_cost, 2) AS effective_cost,
       round(w.effective_cost / nullif(w.gpu_hours_productive, 0), 2)
           AS usd_per_productive_gpu_hour
FROM fct_workloads w
WHERE w.kind ILIKE '%training%'
ORDER BY w.run_id, w.effective_cost DESC
