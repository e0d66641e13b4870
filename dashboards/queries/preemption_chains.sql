-- title: Preemption chains by GPU-hours lost
-- question: Which preemption cascades threw away the most work? Each chain starts with a preemptor that was not recovering from a preemption of its own; its victims that preempt in turn carry it one level deeper. Per chain: the origin preemptor, the pods it displaced directly and through the cascade, how deep it went, and the GPU-hours and cost lost.
SELECT c.run_id, c.chain_id,
       any_value(c.root_workload_id) AS origin_preemptor,
       any_value(w.priority) AS origin_priority,
       any_value(w.kind) AS origin_kind,
       count(*) AS preempted_pods,
       count(*) FILTER (WHERE c.depth > 1) AS preempted_in_cascade,
       count(DISTINCT c.victim_workload_id) AS victim_workloads,
       max(c.depth) AS depth,
       min(c.preempted_at) AS first_preempted_at,
       round(sum(c.lost_gpu_hours), 2) AS lost_gpu_hours,
       round(sum(c.lost_cost), 2) AS lost_cost
FROM fct_preemption_cascades c
LEFT JOIN fct_workloads w ON w.run_id = c.run_id AND w.workload_id = c.root_workload_id
GROUP BY c.run_id, c.chain_id
ORDER BY c.run_id, sum(c.lost_gpu_hours) DESC, c.chain_id
