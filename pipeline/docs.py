"""Generate docs/tables.md from the models: grain comments, lineage, DuckDB's DESCRIBE and,
for the FOCUS table, the column registry."""

from __future__ import annotations

from pathlib import Path

from pipeline.connect import connect
from pipeline.focus.columns import REGISTRY
from pipeline.registry import markdown_tables
from pipeline.runner import MODELS

INTERPRETATION = """\
## How GPU-seconds are classified

- A pod holds GPUs from its `reserved` or `started` row until its next `finished`,
  `preempted` or `timed_out` row, or until the run's horizon (`start + horizon_s`).
- Reserved, not started: `gang_wait`. Started while its group has fewer than `min_count`
  pods running in the current attempt (attempts are separated by `requeued` rows):
  `gang_wait` (partial placement). `min_count` is read from `workloads.parquet`; `resized`
  rows are not replayed.
- The rest is the pod's progress. On a `preempted` or `timed_out` end, the part after
  `max(pod progress start, last_checkpoint_s(group progress start, end, checkpoint_interval_s))`
  is `lost_to_preemption`; everything else is `productive` (also for pods cut at the horizon).
- `lost_to_preemption` rows name the workload the eviction made room for (`x_PreemptedBy`, the
  event log's `preemptor` column) and its team (`x_PreemptedByTenant`).
- `x_Borrowed`: the GPU-hours above the ClusterQueue's nominal quota in the charge period
  (∫ max(admitted − nominal, 0), int_queue_usage), on the attempts Kueue admitted `Borrowing`,
  in proportion to what they held (never more); a workload's GPU rows are split into a
  borrowed and an unborrowed part. Without a quota table, the attempt's `Borrowing` flag.
- `x_Phase`: the run phase of the charge period: `warmup` (periods ending by the first
  submission plus a tenth of the submission window), `steady` (to the end of the period of the
  last submission), `drain` (the rest).

## How idle GPU-hours are split by cause

- Per node and charge period: idle = GPUs × period hours − Σ held GPU-hours (fractional
  requests add up: 0.25 + 0.5 on one device leaves 0.25 idle).
- `shared_device_slack`: with F = Σ requests below one GPU on a node, the fewest devices that
  hold them are ceil(F); their unshared part ceil(F) − F is idle on that node (the event log
  names no device, so this is the least such slack).
- Workloads that can never run (int_unservable_workloads: rejected as LargerThanCluster,
  UnknownGpuModel or UnknownQueue; Kueue's ExceedsMaxQuota, NoMatchingFlavor, Misconfigured,
  Suspended; more GPUs than the queue's quota ceiling; fewer than min_count pods fit) are no
  demand: fct_unservable_demand reports them.
- Waiting demand (from `submitted`/`requeued` to the next `reserved`/`started`/`rejected`),
  by the latest `pending` or `admitted` row: `quota` (WaitingForQuota, WaitingForPodsReady, or
  any code before Kueue admitted it, e.g. NoMatchingFlavor), `latency` (no attempt yet, admitted
  and not placed, PendingEvaluation, PodsReadyTimeout, WaitingForPreemptedWorkloads),
  `placement` (any other code, once admitted or without Kueue). A gang holding 0 < n <
  min_count pods misses (min_count − n) × gpus_per_pod GPUs until its progress starts, on the
  models its pods hold: `gang_barrier` while some are reserved at the barrier, `placement` when
  they started one by one.
- Per GPU model, the usable free GPUs (model GPUs − held − slack) go to `gang_barrier`, then
  to the waterfall of pipeline/registry.py: each step takes min(what is left, what its waits
  could use by its fit test against the nodes' free GPUs, int_shape_fit): `fragmentation`
  (admitted waits whose minimum fits packed but not as the GPUs are: the GPUs on nodes where
  none of their pods fits), `scheduling_latency` (admitted waits whose minimum fits as they
  are), `quota` (the same for quota waits), `scheduling_latency` (waits not evaluated yet),
  `capacity_shortfall` (waits whose minimum is larger than the free GPUs of every model they
  accept); integrated exactly between the change points of the cluster's timeline. A wait's
  GPUs count once: across the models it accepts and across the steps.
- Those amounts are spread over the model's nodes in proportion to each node's idle GPU-hours
  net of its slack, in the causes' order (capped at it); the remainder is `no_demand`. So for
  every node and period Σ PricingQuantity = GPUs × hours, and no quantity is negative.
- CPU and memory (when the price book prices them) are split the same way into requests and
  idle; their idle has the single reason `unallocated` (causes are a GPU notion).
- Idle lines below 1e-12 units (float noise) are not written. Idle rows consume nothing:
  ConsumedQuantity 0 (null on Unused-commitment rows).

## Prices, commitments, FOCUS layouts

- Each node's resource is priced from the book's row of its GPU model (CPU and memory rows
  may also be the default row, empty `gpu_model`, which CPU-only nodes use): Standard nodes pay
  the list price, Committed ones the commitment's (contracted) rate, Dynamic ones the spot
  price. ContractedUnitPrice excludes commitment discounts (FOCUS): the list price on
  Committed nodes; the commitment is in EffectiveCost.
- The Committed capacity of a SKU is one pooled usage commitment (`CommitmentDiscountId`
  `k8s://<run>/commitment/<sku>`): one Purchase row per billing period carries its cost
  (BilledCost, EffectiveCost 0); its nodes' Usage rows carry that cost amortized (EffectiveCost
  at the commitment's rate, BilledCost 0), `Used` for workloads and `Unused` (ConsumedQuantity
  null) for idle. docs/cost-model.md says why.
- Chargeback: int_idle_shares is the one rule that shares idle (policies `separate`, `window`,
  `node`, `cause`); fct_chargeback and fct_showback read it.
- `build --focus-split` writes FOCUS 1.3 split cost allocation: the node-period of a resource
  is the origin charge, workloads are its allocated parts (AllocatedResourceId), idle its
  unallocated remainder (AllocatedResourceId null).
"""


def _lineage(model_name: str) -> str:
    model = next(m for m in MODELS if m.name == model_name)
    reads = sorted(model.dependencies())
    return ", ".join(f"`{name}`" for name in reads)


def table_docs(db: Path) -> str:
    """Markdown describing every model's table or view: grain, inputs and columns."""
    con = connect(db, read_only=True)
    try:
        parts = [
            "# Tables and views",
            "",
            "Generated by `pipeline.docs.table_docs(db)` from each model's `-- grain:` comment, the",
            "tables its SQL reads and DuckDB's `DESCRIBE` (`make docs` regenerates it). Staging",
            "models are views; the others are tables. Raw inputs (`raw_events`, `raw_workloads`,",
            "`raw_nodes`, `raw_cluster_queues`, `raw_runs`, `raw_prices`) hold every built run, keyed",
            "by `run_id`; rebuilding a run replaces its rows. The FOCUS table is described in its",
            "FOCUS 1.2 layout; `build --focus-split` adds the FOCUS 1.3 columns marked below.",
            "",
            INTERPRETATION,
            "## Usage classes and idle causes (pipeline/registry.py)\n",
            markdown_tables(),
            "",
        ]
        for layer in ("staging", "intermediate", "marts"):
            parts.append(f"## {layer.capitalize()}\n")
            for model in (m for m in MODELS if m.layer == layer):
                parts.append(f"### `{model.name}` ({model.materialization})\n")
                parts.append(f"Grain: {model.grain()}\n")
                parts.append(f"Reads: {_lineage(model.name)}\n")
                described = con.execute(f"describe {model.name}").fetchall()
                if model.name == "focus_cost_records":
                    parts.append("| column | type | FOCUS level | FOCUS type | nulls |")
                    parts.append("|---|---|---|---|---|")
                    for name, column_type, *_ in described:
                        column = REGISTRY[name]
                        level = "custom" if column.is_custom else column.level
                        nulls = "yes" if column.nullable else "no"
                        parts.append(
                            f"| {name} | {column_type} | {level} | {column.data_type} | {nulls} |"
                        )
                    names = {row[0] for row in described}
                    split_only = [c for c in REGISTRY.values() if not c.is_custom and c.name not in names]
                    for column in split_only:
                        parts.append(
                            f"| {column.name} (1.3, `--focus-split`) | VARCHAR | {column.level} | "
                            f"{column.data_type} | {'yes' if column.nullable else 'no'} |"
                        )
                else:
                    parts.append("| column | type |")
                    parts.append("|---|---|")
                    for name, column_type, *_ in described:
                        parts.append(f"| {name} | {column_type} |")
                parts.append("")
        return "\n".join(parts).rstrip() + "\n"
    finally:
        con.close()
