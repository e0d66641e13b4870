"""Advice from a cluster's own history: what to set, not only what happened.

- `gpu_finops.advise.objectives`: the objectives TOML (wait targets, shares, search bounds).
- `gpu_finops.advise.space`: the search space over a Kueue manifest file and the manifests of
  one point of it (real Kueue YAML that ``replay --queues`` reads).
- `gpu_finops.advise.figures`: the one function that reads a replay's figures from the marts.
- `gpu_finops.advise.quotas`: ``advise quotas``, an Optuna study whose trials are replays run
  by the sweep's executors (local worker processes or Ray tasks).
- `gpu_finops.advise.commitments`: ``advise commitments``, the commitment level per SKU.
"""
