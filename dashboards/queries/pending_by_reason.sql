-- title: Workloads still pending at the end of each run, by latest reason
-- question: Why are jobs still waiting?
WITH latest AS (
    SELECT run_id, workload_id, arg_max(reason, seq) AS latest_reason
    FROM fct_workload_timeline
    WHERE event = 'pending'
    GROUP BY ALL
)
SELECT w.run_id, coalesce(l.latest_reason, 'no_attempt_yet') AS latest_reason,
       count(*) AS workloads,
       round(sum(w.pods * w.gpus_per_pod), 1) AS gpus_requested
FROM fct_workloads w
LEFT JOIN latest l USING (run_id, workload_id)
WHERE w.final_state = 'pending_at_end'
GROUP BY ALL
ORDER BY w.run_id, workloads DESC
