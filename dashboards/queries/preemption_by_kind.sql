-- title: Preemption per workload kind
-- question: Which kinds of workload lose work to preemption, to which kinds of preemptor, and how much of that loss comes in cascades?
SELECT run_id, victim_kind, preemptor_kind,
       count(*) AS preempted_pods,
       count(DISTINCT victim_workload_id) AS victim_workloads,
       round(sum(lost_gpu_hours), 2) AS lost_gpu_hours,
       round(coalesce(sum(lost_gpu_hours) FILTER (WHERE depth > 1), 0), 2) AS lost_gpu_hours_in_cascade,
       round(sum(lost_cost), 2) AS lost_cost
FROM fct_preemption_cascades
GROUP BY ALL
ORDER BY run_id, lost_gpu_hours DESC, victim_kind, preemptor_kind
