"""The cluster's state during a replay and the indexes kept beside it, one concern a module.

- `cluster_state`: which pod holds which GPU devices, CPU and memory, with the journal that
  makes what-ifs cheap (`mark`, `rollback`, `commit`);
- `candidates`: the nodes a request's GPU models and node selector allow;
- `usage_index`: nodes bucketed by (GPU model, GPU count) and used milli-GPUs, for the
  placement walk, kept once something asks;
- `place_index`: free GPUs per topology domain, kept once something reads them;
- `virtual_free`, `level_views`: free plus lower-priority GPUs per node and preemptor
  priority, and the view of the cluster without lower priorities that preemption plans on;
- `nominations`: GPUs kept for preemptors while their victims terminate;
- `holding_index`: which workloads hold GPUs, by priority, and the releases that can change
  a failed preemption's answer.

Each index is a named object the state owns (`state.candidates`, `state.usage_index`,
`state.places`, `state.virtual_free`, `state.level_changes`, `state.nominations`); none is
mixed into `ClusterState`. Importers name the module (`scheduler.state.cluster_state`).
"""
