-- title: Cost by label (allocation by label), every idle policy
-- question: What does each value of each pod label (cost-center, project, team, app.kubernetes.io/…) cost over the whole run, under each idle policy? The fct_label_allocation mart groups the same bill the Teams page shows by a label's value, as OpenCost's aggregation by label does: workloads without the label are Unlabelled, idle capacity nobody carries under the policy is Unallocated (idle). Per run and label key, each column adds up to the run's FOCUS total.
SELECT run_id, label_key,
       CASE allocation WHEN '__unallocated__' THEN 'Unlabelled'
                       WHEN '__idle__' THEN 'Unallocated (idle)'
                       ELSE allocation END AS label_value,
       round(sum(gpu_hours) FILTER (WHERE idle_policy = 'separate'), 3) AS gpu_hours,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'separate'), 2) AS charged_idle_separate,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'window'), 2) AS charged_idle_shared,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'node'), 2) AS charged_by_node,
       round(sum(charged_cost) FILTER (WHERE idle_policy = 'cause'), 2) AS charged_by_cause
FROM fct_label_allocation
GROUP BY run_id, label_key, allocation
ORDER BY run_id, label_key, allocation = '__idle__', allocation = '__unallocated__', charged_idle_separate DESC, allocation
