-- title: Unservable demand per team
-- question: Which teams asked for work this cluster and its quotas can never run, why (larger than the cluster, more than the queue's quota can ever hold, a GPU model or queue that does not exist), and how many GPU-hours did it ask for? It is not demand for idle causes: it is capacity planning.
SELECT run_id, tenant AS team, reason, count(*) AS workloads,
       max(demand_gpus) AS largest_request_gpus,
       round(sum(asked_gpu_hours), 1) AS asked_gpu_hours,
       round(sum(waited_gpu_hours), 1) AS waited_gpu_hours
FROM fct_unservable_demand
GROUP BY ALL
ORDER BY run_id, asked_gpu_hours DESC
