"""Importers: a cluster's own history → the inputs the replay already reads.

Each importer writes, into one output folder, the files `gpu-finops replay` takes:

- ``trace.csv``: the generic trace (one row per workload = pod group);
- ``cluster.csv``: one row per GPU node;
- ``queues.yaml``: Kueue manifests (when Kueue objects were given);
- ``rejected.csv``: every input object that became neither a workload, a member of one, nor
  a node, with the field at fault and the reason;
- ``pods.csv``: every input pod and what became of it (the workload it is, the workload it is a
  member of, or its rejected row), so each pod can be traced back;
- ``import.json``: the run start the trace's times are relative to, counts, input hashes and
  warnings;
- ``prices.csv``: a starter price book keyed by GPU model, with the products seen as aliases
  (`gpu_finops.importers.price_book`), never written over one of the user's.

Sources: ``kubectl`` dumps (`gpu_finops.importers.kubectl`), Kueue objects
(`gpu_finops.importers.kueue`) and Prometheus range queries of kube-state-metrics
(`gpu_finops.importers.prometheus`). docs/importers.md documents every field mapping.
"""
