-- title: Who preempts whom, per priority pair
-- question: Which priority levels displace which, how often directly and how often in a cascade (the preemptor was itself recovering from a preemption), and how much work did each pair throw away?
SELECT run_id, preemptor_priority, victim_priority,
       count(*) AS preempted_pods,
       count(*) FILTER (WHERE depth > 1) AS preempted_in_cascade,
       count(DISTINCT preemptor_workload_id) AS preemptors,
       count(DISTINCT victim_workload_id) AS victim_workloads,
       round(sum(lost_gpu_hours), 2) AS lost_gpu_hours,
       round(sum(lost_cost), 2) AS lost_cost
FROM fct_preemption_cascades
GROUP BY ALL
ORDER BY run_id, preemptor_priority DESC, victim_priority DESC
