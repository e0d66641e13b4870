-- title: Checkpoint loss per eviction
-- question: What did each eviction throw away (the work since the group's last checkpoint), per victim team, and who caused it: a reclaim by another queue, a preemption, or a time-out?
SELECT run_id, tenant AS team,
       CASE WHEN end_event = 'timed_out' THEN 'time-out'
            WHEN reclaim THEN 'reclaim' ELSE 'preemption' END AS cause,
       count(*) AS evictions,
       round(sum(lost_gpu_hours), 2) AS lost_gpu_hours,
       round(sum(lost_cost), 2) AS lost_cost,
       round(avg(lost_cost), 2) AS lost_cost_per_eviction,
       string_agg(DISTINCT preemptor_tenant, ', ') AS preempting_teams
FROM fct_evictions
GROUP BY run_id, team, cause
ORDER BY run_id, lost_cost DESC
