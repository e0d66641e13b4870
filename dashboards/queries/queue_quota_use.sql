-- title: Quota use per ClusterQueue
-- question: How much of its nominal quota did each ClusterQueue use, and how much did it borrow from its cohort? (Needs a run replayed with a queues file.)
SELECT run_id, cluster_queue, flavor,
       max(nominal_quota) AS nominal_quota,
       max(borrowing_limit) AS borrowing_limit,
       round(avg(admitted_gpus), 2) AS mean_admitted_gpus,
       round(max(admitted_gpus), 2) AS peak_admitted_gpus,
       round(100 * avg(admitted_gpus) / nullif(max(nominal_quota), 0), 1) AS nominal_used_pct,
       round(max(borrowed_gpus), 2) AS peak_borrowed_gpus
FROM fct_queue_usage
GROUP BY ALL
ORDER BY run_id, cluster_queue, flavor
