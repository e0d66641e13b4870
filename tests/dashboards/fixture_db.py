"""A small DuckDB file with the mart tables of docs/contracts.md: dashboard tests without the pipeline.

Two runs. ``demo-a`` (48 h, two nodes: 8x H100 Committed, 4x A100 Standard) holds:
- ``train-1``: ml-research, 2 pods x 4 GPUs on the H100 node, productive hours 0-10;
- ``gang-2``: team o'brien, a 2-pod gang of which one pod held the whole A100 node for hours
  2-6 (gang_wait: a partially placed gang), then timed out and is pending at the end;
- ``=SUM(A1)``: ml-research (an id that a spreadsheet would run as a formula), 1 pod x 2 GPUs
  on the A100 node, productive hours 8-18, preempted at 20 with hours 18-20 lost;
- ``big-4``: team o'brien, 4 pods x 8 GPUs, never placed (Unschedulable, then quota);
- ``reject-5``: rejected (bigger than the cluster);
- ``infer-6``: platform, 1 pod x 1 GPU on the H100 node, hours 24-40.
Idle capacity is split between ``fragmentation`` (first day) and ``no_demand`` (second day).
Kueue (``fct_queue_usage``, one row per ClusterQueue × flavor × hour of ``demo-a``): ``cq-ml``
(flavor h100: nominal 4, borrowing limit 4; flavor a100: nominal 2, limit 0) admits train-1's 8
GPUs for hours 0-10, 4 of them borrowed (pod 1's records carry ``x_Borrowed``), and =SUM(A1)'s
2 A100 GPUs for hours 8-20; ``cq-ob`` (a100: nominal 4, no borrowing limit) admits gang-2's 4
GPUs for hours 2-6; ``cq-pl`` (h100: nominal 4, limit 0) admits infer-6 for hours 24-40.
``demo-b`` (24 h, one H100 node) has one productive workload and no queues; its pod also
uses 32 CPU cores ($0.01 a core-hour: $3.84), so GPU-hours must be counted on GPU rows only.
The Committed H100 node of ``demo-a`` has a commitment ``Purchase`` row (no usage, no
effective cost: the usage rows carry it), as the pipeline writes one per billing period.
Costs: list 4.0 / contracted 3.0 per H100 GPU-hour, 2.0 / 1.5 per A100; Committed nodes pay contracted, Standard list.

Run phases (``dim_runs``, ``x_Phase``): ``demo-a`` is steady throughout (so the numbers above are
what every page shows by default); ``demo-b`` is steady for hours 0-12 and drains for 12-24.
``fct_chargeback`` applies the pipeline's rule to these rows (``_chargeback_rows``): idle by
charge period × GPU model in proportion to cost, one node per model so ``node`` is the same, and
``cause`` keeps no_demand on the platform line; =SUM(A1)'s lost work was reclaimed by gang-2
(another ClusterQueue). ``reject-5`` is unservable demand (LargerThanCluster, 2 h asked).
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
from fixture_cascades import add_preemption_cascades

FOCUS_COLUMNS = [
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName",
    "BillingAccountType", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
    "CapacityReservationId", "CapacityReservationStatus", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
    "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
    "CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType",
    "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost",
    "ListUnitPrice", "PricingCategory", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice", "PricingQuantity",
    "PricingUnit", "ProviderName", "PublisherName", "RegionId", "RegionName", "ResourceId",
    "ResourceName", "ResourceType", "ServiceCategory", "ServiceName", "ServiceSubcategory",
    "SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId", "SubAccountName",
    "SubAccountType", "Tags",
]
X_COLUMNS = [
    "x_RunId", "x_Node", "x_GpuModel", "x_Rack", "x_Tenant", "x_Workload", "x_Queue",
    "x_ClusterQueue", "x_Priority", "x_UsageClass", "x_IdleReason", "x_Resource", "x_Borrowed",
    "x_Phase", "x_PreemptedBy", "x_PreemptedByTenant",
]
_DECIMAL_FOCUS = {
    "BilledCost", "CommitmentDiscountQuantity", "ConsumedQuantity", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "ListCost", "ListUnitPrice",
    "PricingCurrencyContractedUnitPrice", "PricingCurrencyEffectiveCost",
    "PricingCurrencyListUnitPrice", "PricingQuantity",
}
_TIMESTAMP_FOCUS = {"BillingPeriodEnd", "BillingPeriodStart", "ChargePeriodEnd", "ChargePeriodStart"}

X_TYPES = {"x_Priority": "BIGINT", "x_Borrowed": "BOOLEAN"}

CPU_PRICE = 0.01  # per core-hour, list = contracted
CPU_CORES = {("demo-b", "b-1"): 32}  # CPU cores a pod uses besides its GPUs

PRICES = {"H100": (4.0, 3.0), "A100": (2.0, 1.5)}  # (list, contracted) per GPU-hour

DDL = """
CREATE TABLE dim_runs (run_id VARCHAR, profile VARCHAR, seed BIGINT, start_ts TIMESTAMP,
    end_ts TIMESTAMP, horizon_s DOUBLE, nodes BIGINT, gpus BIGINT, workloads BIGINT, pods BIGINT,
    first_submit_ts TIMESTAMP, last_submit_ts TIMESTAMP, steady_start_ts TIMESTAMP,
    drain_start_ts TIMESTAMP);
CREATE TABLE dim_nodes (run_id VARCHAR, node VARCHAR, gpu_model VARCHAR, gpus BIGINT,
    zone VARCHAR, block VARCHAR, rack VARCHAR, pricing_category VARCHAR);
CREATE TABLE fct_workloads (run_id VARCHAR, workload_id VARCHAR, tenant VARCHAR, queue VARCHAR,
    cluster_queue VARCHAR, priority BIGINT, kind VARCHAR, pods BIGINT, min_count BIGINT,
    gpus_per_pod DOUBLE, gpu_model VARCHAR, submit_ts TIMESTAMP, first_start_ts TIMESTAMP,
    end_ts TIMESTAMP, final_state VARCHAR, wait_s DOUBLE, preemptions BIGINT, timeouts BIGINT,
    partial_placement BOOLEAN, gpu_hours_productive DOUBLE, gpu_hours_gang_wait DOUBLE,
    gpu_hours_lost DOUBLE, effective_cost DOUBLE, outcome VARCHAR, unservable_reason VARCHAR,
    pending_demand_gpu_hours DOUBLE, pending_demand_list_value DOUBLE, idle_share_cost DOUBLE,
    cost_with_idle DOUBLE);
CREATE TABLE fct_pending_demand (run_id VARCHAR, workload_id VARCHAR, tenant VARCHAR,
    charge_period_start TIMESTAMP, gpu_model VARCHAR, gpu_hours DOUBLE, list_value DOUBLE);
CREATE TABLE fct_workload_timeline (run_id VARCHAR, workload_id VARCHAR, seq BIGINT,
    ts TIMESTAMP, time_s DOUBLE, event VARCHAR, pod_index BIGINT, node VARCHAR, gpus DOUBLE,
    reason VARCHAR, message VARCHAR, preemptor VARCHAR, queue_position INTEGER,
    queue_length INTEGER);
CREATE TABLE fct_pod_intervals (run_id VARCHAR, workload_id VARCHAR, pod_index BIGINT,
    node VARCHAR, gpu_model VARCHAR, gpus DOUBLE, start_ts TIMESTAMP, end_ts TIMESTAMP,
    usage_class VARCHAR);
CREATE TABLE fct_queue_usage (run_id VARCHAR, cluster_queue VARCHAR, cohort VARCHAR,
    flavor VARCHAR, charge_period_start TIMESTAMP, admitted_gpus DOUBLE, nominal_quota DOUBLE,
    borrowing_limit DOUBLE, borrowed_gpus DOUBLE);
CREATE TABLE fct_usage_hourly (run_id VARCHAR, charge_period_start TIMESTAMP, tenant VARCHAR,
    gpu_model VARCHAR, usage_class VARCHAR, idle_reason VARCHAR, gpu_hours DOUBLE,
    effective_cost DOUBLE, list_cost DOUBLE, resource VARCHAR, quantity DOUBLE, unit VARCHAR,
    phase VARCHAR, pricing_category VARCHAR);
CREATE TABLE fct_chargeback (run_id VARCHAR, charge_period_start TIMESTAMP,
    billing_period_start TIMESTAMP, phase VARCHAR, gpu_model VARCHAR, resource VARCHAR,
    idle_policy VARCHAR, tenant VARCHAR, gpu_hours DOUBLE, productive_gpu_hours DOUBLE,
    gang_wait_gpu_hours DOUBLE, lost_gpu_hours DOUBLE, usage_cost DOUBLE, list_cost DOUBLE,
    productive_cost DOUBLE, gang_wait_cost DOUBLE, preemption_waste_cost DOUBLE,
    idle_share_gpu_hours DOUBLE, idle_share_quantity DOUBLE, idle_share_cost DOUBLE,
    idle_share_list_cost DOUBLE, charged_cost DOUBLE, reclaim_adjustment_cost DOUBLE);
CREATE TABLE fct_label_allocation (run_id VARCHAR, charge_period_start TIMESTAMP,
    billing_period_start TIMESTAMP, phase VARCHAR, gpu_model VARCHAR, resource VARCHAR,
    idle_policy VARCHAR, label_key VARCHAR, allocation VARCHAR, tenant VARCHAR, gpu_hours DOUBLE,
    usage_cost DOUBLE, list_cost DOUBLE, idle_share_gpu_hours DOUBLE, idle_share_quantity DOUBLE,
    idle_share_cost DOUBLE, idle_share_list_cost DOUBLE, charged_cost DOUBLE);
CREATE TABLE fct_unservable_demand (run_id VARCHAR, workload_id VARCHAR, tenant VARCHAR,
    cluster_queue VARCHAR, kind VARCHAR, reason VARCHAR, evidence VARCHAR, pods INTEGER,
    min_count INTEGER, gpus_per_pod DOUBLE, gpu_model VARCHAR, demand_gpus DOUBLE,
    submit_ts TIMESTAMP, submit_phase VARCHAR, duration_hours DOUBLE, asked_gpu_hours DOUBLE,
    waited_gpu_hours DOUBLE);
CREATE TABLE fct_evictions (run_id VARCHAR, workload_id VARCHAR, tenant VARCHAR, kind VARCHAR,
    attempt BIGINT, evicted_ts TIMESTAMP, end_event VARCHAR, pods_evicted BIGINT,
    preemptor VARCHAR, preemptor_tenant VARCHAR, reclaim BOOLEAN, checkpoint_interval_s DOUBLE,
    lost_gpu_hours DOUBLE, lost_cost DOUBLE);
CREATE TABLE fct_commitment_utilization (run_id VARCHAR, commitment_id VARCHAR,
    billing_period_start TIMESTAMP, sku_id VARCHAR, nodes BIGINT, gpu_model VARCHAR,
    resource VARCHAR, unit VARCHAR, committed_quantity DOUBLE, used_quantity DOUBLE,
    unused_quantity DOUBLE, commitment_cost DOUBLE, used_cost DOUBLE, unused_cost DOUBLE,
    utilization DOUBLE, on_demand_quantity DOUBLE, spot_quantity DOUBLE, coverage DOUBLE,
    coverable_on_demand_quantity DOUBLE, coverable_on_demand_cost DOUBLE);
"""

# (run, node, gpu_model, gpus, rack, pricing_category)
NODES = [
    ("demo-a", "node-h100-0", "H100", 8, "rack-1", "Committed"),
    ("demo-a", "node-a100-0", "A100", 4, "rack-2", "Standard"),
    ("demo-b", "node-h100-0", "H100", 8, "rack-1", "Committed"),
]
RUNS = {"demo-a": (datetime(2026, 11, 2), 48), "demo-b": (datetime(2026, 11, 10), 24)}
# run -> (steady from, drain from) in hours: demo-a is steady throughout, demo-b drains from 12 h
PHASE_BOUNDS = {"demo-a": (0, 48), "demo-b": (0, 12)}
PREEMPTED_BY = {("demo-a", "=SUM(A1)"): ("gang-2", "team-o'brien")}  # (run, victim): preemptor
UNSERVABLE = {("demo-a", "reject-5"): ("LargerThanCluster", 2.0)}  # reason, duration asked (h)

# workload: (run, id, tenant, queue, kind, pods, min_count, gpus_per_pod, gpu_model,
#            submit_h, final_state, preemptions, timeouts, partial)
WORKLOADS = [
    ("demo-a", "train-1", "ml-research", "lq-ml", "training", 2, 2, 4.0, "H100", 0, "finished", 0, 0, False),
    ("demo-a", "gang-2", "team-o'brien", "lq-ob", "training", 2, 2, 4.0, "A100|H100", 1, "pending_at_end", 0, 1, True),
    ("demo-a", "=SUM(A1)", "ml-research", "lq-ml", "fine-tune", 1, 1, 2.0, "A100", 7, "pending_at_end", 1, 0, False),
    ("demo-a", "big-4", "team-o'brien", "lq-ob", "training", 4, 4, 8.0, "H100", 3, "pending_at_end", 0, 0, False),
    ("demo-a", "reject-5", "platform", "lq-pl", "batch", 16, 16, 8.0, "", 0, "rejected", 0, 0, False),
    ("demo-a", "infer-6", "platform", "lq-pl", "inference", 1, 1, 1.0, "", 23, "running_at_end", 0, 0, False),
    ("demo-b", "b-1", "ml-research", "", "training", 1, 1, 8.0, "H100", 0, "finished", 0, 0, False),
]

# ClusterQueue quotas of demo-a: (cluster_queue, flavor, nominal_quota, borrowing_limit)
QUOTAS = [("cq-ml", "h100", 4.0, 4.0), ("cq-ml", "a100", 2.0, 0.0), ("cq-ob", "a100", 4.0, None),
          ("cq-pl", "h100", 4.0, 0.0)]
FLAVOR_OF_MODEL = {"H100": "h100", "A100": "a100"}
BORROWED_PODS = {("demo-a", "train-1", 1)}  # admitted on quota borrowed from the cohort

# pod intervals: (run, workload, pod, node, gpus, start_h, end_h, usage_class)
INTERVALS = [
    ("demo-a", "train-1", 0, "node-h100-0", 4, 0, 10, "productive"),
    ("demo-a", "train-1", 1, "node-h100-0", 4, 0, 10, "productive"),
    ("demo-a", "gang-2", 0, "node-a100-0", 4, 2, 6, "gang_wait"),
    ("demo-a", "=SUM(A1)", 0, "node-a100-0", 2, 8, 18, "productive"),
    ("demo-a", "=SUM(A1)", 0, "node-a100-0", 2, 18, 20, "lost_to_preemption"),
    ("demo-a", "infer-6", 0, "node-h100-0", 1, 24, 40, "productive"),
    ("demo-b", "b-1", 0, "node-h100-0", 8, 0, 12, "productive"),
]

# timeline: (run, workload, hour, event, pod, node, gpus, reason, message)
TIMELINE = [
    ("demo-a", "train-1", 0, "submitted", None, None, None, None, None),
    ("demo-a", "train-1", 0, "admitted", None, None, None, None, "admitted by ClusterQueue cq-ml"),
    ("demo-a", "train-1", 0, "started", 0, "node-h100-0", 4, None, None),
    ("demo-a", "train-1", 0, "started", 1, "node-h100-0", 4, None, None),
    ("demo-a", "train-1", 10, "finished", 0, "node-h100-0", 4, None, None),
    ("demo-a", "train-1", 10, "finished", 1, "node-h100-0", 4, None, None),
    ("demo-a", "gang-2", 1, "submitted", None, None, None, None, None),
    ("demo-a", "gang-2", 1.5, "pending", None, None, None, "Unschedulable",
     "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match GPU model."),
    ("demo-a", "gang-2", 2, "reserved", 0, "node-a100-0", 4, "WaitingForGang",
     "pod 0 reserved; 1/2 pods placed, waiting for min_count=2"),
    ("demo-a", "gang-2", 6, "timed_out", None, None, None, "GangTimeout",
     "gang did not reach min_count=2 within 14400s; releasing 4 GPUs"),
    ("demo-a", "gang-2", 6.5, "pending", None, None, None, "Unschedulable",
     "0/2 nodes are available: 2 Insufficient nvidia.com/gpu (requested 4 x 2 pods)."),
    ("demo-a", "=SUM(A1)", 7, "submitted", None, None, None, None, None),
    ("demo-a", "=SUM(A1)", 8, "started", 0, "node-a100-0", 2, None, None),
    ("demo-a", "=SUM(A1)", 20, "preempted", 0, "node-a100-0", 2, "preempted-by:gang-2",
     "preempted by workload gang-2 (priority 100 > 0)"),
    ("demo-a", "=SUM(A1)", 20.5, "pending", None, None, None, "QuotaExceeded",
     "couldn't assign flavors: insufficient quota for nvidia.com/gpu in flavor a100, 2 more needed"),
    ("demo-a", "big-4", 3, "submitted", None, None, None, None, None),
    ("demo-a", "big-4", 3, "pending", None, None, None, "Unschedulable",
     "0/2 nodes are available: 2 Insufficient nvidia.com/gpu (requested 8 x 4 pods)."),
    ("demo-a", "big-4", 30, "pending", None, None, None, "QuotaExceeded",
     "couldn't assign flavors: insufficient quota for nvidia.com/gpu in flavor h100, 24 more needed; "
     "position 2 of 2 in ClusterQueue cq-ob"),
    ("demo-a", "reject-5", 0, "rejected", None, None, None, "TooLarge",
     "needs 128 GPUs, the cluster has 12"),
    ("demo-a", "infer-6", 23, "submitted", None, None, None, None, None),
    ("demo-a", "infer-6", 23.5, "pending", None, None, None, "Unschedulable", "waiting for a node"),
    ("demo-a", "infer-6", 24, "started", 0, "node-h100-0", 1, None, None),
    ("demo-b", "b-1", 0, "submitted", None, None, None, None, None),
    ("demo-b", "b-1", 0, "started", 0, "node-h100-0", 8, None, None),
    ("demo-b", "b-1", 12, "finished", 0, "node-h100-0", 8, None, None),
]

# Event-log 1.2 columns of the rows above: (run, workload, hour) -> (preemptor, queue position,
# queue length), the facts their reason and message also state.
TIMELINE_FACTS = {
    ("demo-a", "=SUM(A1)", 20): ("gang-2", None, None),
    ("demo-a", "big-4", 30): (None, 2, 2),
}


def _cluster_queue(local_queue: str | None) -> str | None:
    """LocalQueue lq-ml feeds ClusterQueue cq-ml; no queue, no ClusterQueue."""
    return f"cq-{local_queue[3:]}" if local_queue else None


def _node_info(run: str, node: str) -> tuple[str, int, str, str]:
    for r, n, model, gpus, rack, category in NODES:
        if (r, n) == (run, node):
            return model, gpus, rack, category
    raise KeyError((run, node))


def _prices(model: str, category: str) -> tuple[float, float, float]:
    list_price, contracted = PRICES[model]
    effective = contracted if category == "Committed" else list_price
    return list_price, contracted, effective


def _phase(run: str, period: datetime) -> str:
    start, _ = RUNS[run]
    steady, drain = PHASE_BOUNDS[run]
    hour = (period - start) / timedelta(hours=1)
    return "warmup" if hour < steady else "drain" if hour >= drain else "steady"


def _focus_row(run, period, node, model, rack, category, tenant, workload, queue, usage_class,
               idle_reason, gpu_hours, borrowed=False, resource="gpu") -> dict:
    # ContractedUnitPrice excludes commitment discounts (FOCUS): the list price, as the pipeline's
    list_price, _, effective = _prices(model, category) if resource == "gpu" else (
        CPU_PRICE, CPU_PRICE, CPU_PRICE)
    unit = "GPU-Hours" if resource == "gpu" else "Core-Hours"
    row = dict.fromkeys(FOCUS_COLUMNS + X_COLUMNS)
    row.update(
        BilledCost=round(gpu_hours * effective, 6), BillingAccountId="acct-1",
        BillingAccountName="GPU cluster", BillingCurrency="USD",
        BillingPeriodStart=datetime(period.year, period.month, 1),
        BillingPeriodEnd=datetime(period.year, period.month + 1, 1),
        ChargeCategory="Usage", ChargeDescription=f"{model} {unit} ({usage_class})",
        ChargeFrequency="Usage-Based", ChargePeriodStart=period,
        ChargePeriodEnd=period + timedelta(hours=1),
        # idle consumes nothing: 0, and null on a Committed node's unused capacity (FOCUS)
        ConsumedQuantity=gpu_hours if usage_class != "idle" else (
            None if category == "Committed" else 0.0),
        ConsumedUnit=unit, ContractedCost=round(gpu_hours * list_price, 6),
        ContractedUnitPrice=list_price, EffectiveCost=round(gpu_hours * effective, 6),
        InvoiceIssuerName="gpu-finops", ListCost=round(gpu_hours * list_price, 6),
        ListUnitPrice=list_price, PricingCategory=category, PricingCurrency="USD",
        PricingQuantity=gpu_hours, PricingUnit=unit, ProviderName="gpu-finops",
        PublisherName="gpu-finops", ResourceId=node, ResourceName=node, ResourceType="GPU node",
        ServiceCategory="AI and Machine Learning", ServiceName="GPU cluster",
        SkuId=model, SkuPriceId=f"{model}-{category}",
    )
    row.update(
        x_RunId=run, x_Node=node, x_GpuModel=model, x_Rack=rack, x_Tenant=tenant,
        x_Workload=workload, x_Queue=queue or None, x_ClusterQueue=_cluster_queue(queue),
        x_Priority=0, x_UsageClass=usage_class, x_IdleReason=idle_reason, x_Resource=resource,
        x_Borrowed=borrowed, x_Phase=_phase(run, period),
    )
    if usage_class == "lost_to_preemption" and (run, workload) in PREEMPTED_BY:
        row["x_PreemptedBy"], row["x_PreemptedByTenant"] = PREEMPTED_BY[(run, workload)]
    return row


def _commitment_purchase(run: str, node: str) -> dict:
    """The month's commitment Purchase row of a Committed node: billed, never consumed."""
    start, hours = RUNS[run]
    model, gpus, rack, category = _node_info(run, node)
    row = _focus_row(run, start, node, model, rack, category, "__commitment__", None, None,
                     "commitment_purchase", None, float(gpus * hours))
    contracted = PRICES[model][1]
    row.update(ChargeCategory="Purchase", ChargeFrequency="Recurring", ConsumedQuantity=None,
               ConsumedUnit=None, EffectiveCost=0.0, BilledCost=gpus * hours * contracted,
               ChargePeriodEnd=start + timedelta(hours=hours), PricingCategory="Standard",
               ResourceType="Commitment", x_Phase=None, x_Node=None)
    return row


def _queue_usage_rows() -> list[list]:
    """demo-a's hourly admitted and borrowed GPUs per ClusterQueue × flavor (see the module doc)."""
    run = "demo-a"
    start, hours = RUNS[run]
    workloads = {w[1]: w for w in WORKLOADS if w[0] == run}
    rows = []
    for cluster_queue, flavor, nominal, limit in QUOTAS:
        for hour in range(hours):
            admitted = borrowed = 0.0
            for ir, wid, pod, node, gpus, h0, h1, _usage in INTERVALS:
                w = workloads.get(wid)
                if ir != run or w is None or _cluster_queue(w[3]) != cluster_queue:
                    continue
                if FLAVOR_OF_MODEL[_node_info(run, node)[0]] == flavor and h0 <= hour < h1:
                    admitted += gpus
                    borrowed += gpus if (run, wid, pod) in BORROWED_PODS else 0.0
            rows.append([run, cluster_queue, flavor, start + timedelta(hours=hour), admitted,
                         nominal, limit, borrowed])
    return rows


POLICIES = ("separate", "window", "node", "cause")
_CHARGEBACK_SUMS = ("gpu_hours", "productive_gpu_hours", "gang_wait_gpu_hours", "lost_gpu_hours",
                    "usage_cost", "list_cost", "productive_cost", "gang_wait_cost",
                    "preemption_waste_cost", "idle_share_gpu_hours", "idle_share_quantity",
                    "idle_share_cost", "idle_share_list_cost", "reclaim_adjustment_cost")


def _chargeback_rows(focus_rows: list[dict]) -> tuple[list[dict], dict[tuple, float]]:
    """fct_chargeback for the usage rows, and each workload's idle share under `window` per
    (run, workload, hour, GPU model, team): int_idle_shares' rows of that policy.

    The pipeline's rule on this fixture: a cell is (run, hour, GPU model, resource); its idle is
    shared in proportion to each workload's cost there, or stays on __idle__ when nobody used
    it. One node per model, so `node` shares alike; `cause` keeps no_demand on __idle__ and
    shares the rest (fragmentation) as `window` does."""
    usage = [r for r in focus_rows if r["ChargeCategory"] == "Usage"]
    cells: dict[tuple, dict] = defaultdict(lambda: {"users": defaultdict(float), "idle": []})
    for r in usage:
        key = (r["x_RunId"], r["ChargePeriodStart"], r["x_GpuModel"], r["x_Resource"])
        if r["x_UsageClass"] == "idle":
            cells[key]["idle"].append(r)
        else:
            cells[key]["users"][(r["x_Tenant"], r["x_Workload"])] += r["EffectiveCost"]
    out: dict[tuple, dict] = defaultdict(lambda: dict.fromkeys(_CHARGEBACK_SUMS, 0.0))
    workload_idle: dict[tuple, float] = defaultdict(float)
    for r in usage:
        if r["x_UsageClass"] == "idle":
            continue
        gpu = r["PricingQuantity"] if r["x_Resource"] == "gpu" else 0.0
        for policy in POLICIES:
            row = out[(r["x_RunId"], r["ChargePeriodStart"], r["x_GpuModel"], r["x_Resource"], policy,
                       r["x_Tenant"])]
            row["gpu_hours"] += gpu
            row[f"{'lost' if r['x_UsageClass'] == 'lost_to_preemption' else r['x_UsageClass']}_gpu_hours"] += gpu
            row["usage_cost"] += r["EffectiveCost"]
            row["list_cost"] += r["ListCost"]
            cost_part = {"productive": "productive_cost", "gang_wait": "gang_wait_cost",
                         "lost_to_preemption": "preemption_waste_cost"}[r["x_UsageClass"]]
            row[cost_part] += r["EffectiveCost"]
            if r.get("x_PreemptedByTenant"):  # reclaimed by another ClusterQueue's workload
                row["reclaim_adjustment_cost"] -= r["EffectiveCost"]
                out[(r["x_RunId"], r["ChargePeriodStart"], r["x_GpuModel"], r["x_Resource"], policy,
                     r["x_PreemptedByTenant"])]["reclaim_adjustment_cost"] += r["EffectiveCost"]
    for (run, period, model, resource), cell in cells.items():
        total = sum(cell["users"].values())
        for idle in cell["idle"]:
            for policy in POLICIES:
                shared = policy in ("window", "node") or (
                    policy == "cause" and idle["x_IdleReason"] != "no_demand")
                recipients = ({key: cost / total for key, cost in cell["users"].items()}
                              if shared and total > 0 else {("__idle__", None): 1.0})
                for (tenant, workload), weight in recipients.items():
                    row = out[(run, period, model, resource, policy, tenant)]
                    quantity = idle["PricingQuantity"] * weight
                    row["idle_share_gpu_hours"] += quantity if resource == "gpu" else 0.0
                    row["idle_share_quantity"] += quantity
                    row["idle_share_cost"] += idle["EffectiveCost"] * weight
                    row["idle_share_list_cost"] += idle["ListCost"] * weight
                    if policy == "window" and workload is not None:
                        workload_idle[(run, workload, period, model, tenant)] += idle["EffectiveCost"] * weight
    rows = []
    for (run, period, model, resource, policy, tenant), sums in sorted(out.items(), key=str):
        rows.append({"run_id": run, "charge_period_start": period,
                     "billing_period_start": datetime(period.year, period.month, 1),
                     "phase": _phase(run, period), "gpu_model": model, "resource": resource,
                     "idle_policy": policy, "tenant": tenant, **sums,
                     "charged_cost": sums["usage_cost"] + sums["idle_share_cost"]})
    return rows, workload_idle


def build_fixture_db(path: Path) -> Path:
    """Write the fixture database to ``path`` (replacing it) and return the path."""
    path = Path(path)
    path.unlink(missing_ok=True)
    workloads = {(w[0], w[1]): w for w in WORKLOADS}
    focus_rows: list[dict] = []
    for run, (start, hours) in RUNS.items():
        for r, node, model, capacity, rack, category in NODES:
            if r != run:
                continue
            for hour in range(hours):
                period = start + timedelta(hours=hour)
                used = 0
                for ir, wid, pod, inode, gpus, h0, h1, usage_class in INTERVALS:
                    if (ir, inode) == (run, node) and h0 <= hour < h1:
                        w = workloads[(run, wid)]
                        focus_rows.append(_focus_row(run, period, node, model, rack, category,
                                                     w[2], wid, w[3], usage_class, None, float(gpus),
                                                     (run, wid, pod) in BORROWED_PODS))
                        if (run, wid) in CPU_CORES:
                            focus_rows.append(_focus_row(
                                run, period, node, model, rack, category, w[2], wid, w[3],
                                usage_class, None, float(CPU_CORES[(run, wid)]), resource="cpu"))
                        used += gpus
                if capacity > used:
                    reason = "fragmentation" if hour < 24 else "no_demand"
                    focus_rows.append(_focus_row(run, period, node, model, rack, category,
                                                 "__idle__", None, None, "idle", reason,
                                                 float(capacity - used)))
    focus_rows.append(_commitment_purchase("demo-a", "node-h100-0"))
    con = duckdb.connect(str(path))
    try:
        con.execute("BEGIN")  # one commit: a commit per INSERT costs seconds of fsync
        con.execute(DDL)
        focus_types = [
            f'"{c}" ' + ("DOUBLE" if c in _DECIMAL_FOCUS else
                         "TIMESTAMP" if c in _TIMESTAMP_FOCUS else "VARCHAR")
            for c in FOCUS_COLUMNS
        ]
        x_types = [f"{c} {X_TYPES.get(c, 'VARCHAR')}" for c in X_COLUMNS]
        con.execute(f"CREATE TABLE focus_cost_records ({', '.join(focus_types + x_types)})")
        # From a DataFrame: executemany with ~70 parameters a row takes seconds.
        focus_frame = pd.DataFrame(  # noqa: F841 (read by the INSERT below)
            focus_rows, columns=FOCUS_COLUMNS + X_COLUMNS)
        con.execute("INSERT INTO focus_cost_records SELECT * FROM focus_frame")
        # fct_usage_hourly is the focus records rolled up, as the pipeline does.
        con.execute(
            """
            INSERT INTO fct_usage_hourly
            SELECT x_RunId, ChargePeriodStart, x_Tenant, x_GpuModel, x_UsageClass, x_IdleReason,
                   coalesce(sum(PricingQuantity) FILTER (WHERE x_Resource = 'gpu'), 0),
                   sum(EffectiveCost), sum(ListCost), x_Resource, sum(PricingQuantity),
                   any_value(PricingUnit), any_value(x_Phase), PricingCategory
            FROM focus_cost_records WHERE ChargeCategory = 'Usage' GROUP BY ALL
            """
        )
        for run, (start, hours) in RUNS.items():
            run_nodes = [n for n in NODES if n[0] == run]
            run_workloads = [w for w in WORKLOADS if w[0] == run]
            submits = [start + timedelta(hours=w[9]) for w in run_workloads]
            steady, drain = PHASE_BOUNDS[run]
            con.execute(
                "INSERT INTO dim_runs VALUES (?, 'gang-v1.37', 42, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run, start, start + timedelta(hours=hours), hours * 3600.0, len(run_nodes),
                 sum(n[3] for n in run_nodes), len(run_workloads),
                 sum(w[5] for w in run_workloads), min(submits), max(submits),
                 start + timedelta(hours=steady), start + timedelta(hours=drain)],
            )
        con.executemany(
            "INSERT INTO dim_nodes VALUES (?, ?, ?, ?, 'zone-a', 'block-1', ?, ?)",
            [list(n) for n in NODES],
        )
        hours_by = defaultdict(float)
        first_h: dict[tuple, float] = {}
        last_h: dict[tuple, float] = {}
        for run, wid, _pod, _node, gpus, h0, h1, usage_class in INTERVALS:
            hours_by[(run, wid, usage_class)] += gpus * (h1 - h0)
            if usage_class != "gang_wait":
                first_h[(run, wid)] = min(first_h.get((run, wid), h0), h0)
            last_h[(run, wid)] = max(last_h.get((run, wid), h1), h1)
        chargeback, workload_idle = _chargeback_rows(focus_rows)
        chargeback_frame = pd.DataFrame(chargeback)  # noqa: F841 (read by the INSERT below)
        con.execute("INSERT INTO fct_chargeback BY NAME SELECT * FROM chargeback_frame")
        con.execute("CREATE TABLE stg_runs AS SELECT run_id, start_ts, 3600.0 AS charge_period_s FROM "
                    "(VALUES " + ", ".join(f"('{r}', TIMESTAMP '{start}')" for r, (start, _) in RUNS.items())
                    + ") AS t(run_id, start_ts)")
        con.execute("CREATE TABLE int_idle_shares (run_id VARCHAR, period_index BIGINT, gpu_model VARCHAR, "
                    "idle_policy VARCHAR, tenant VARCHAR, workload_id VARCHAR, idle_cost DOUBLE)")
        con.executemany("INSERT INTO int_idle_shares VALUES (?, ?, ?, 'window', ?, ?, ?)", [
            [run, int((period - RUNS[run][0]).total_seconds() // 3600), model, tenant, workload, cost]
            for (run, workload, period, model, tenant), cost in sorted(workload_idle.items(), key=str)])
        # allocation by label: demo-a's teams carry a cost-center label, all but team o'brien
        # (unlabelled); the platform line stays __idle__. The same bill as fct_chargeback.
        con.execute("""INSERT INTO fct_label_allocation BY NAME
                       SELECT * EXCLUDE (productive_gpu_hours, gang_wait_gpu_hours, lost_gpu_hours,
                                         productive_cost, gang_wait_cost, preemption_waste_cost,
                                         reclaim_adjustment_cost),
                              'cost-center' AS label_key,
                              CASE tenant WHEN 'ml-research' THEN 'cc-research' WHEN 'platform' THEN 'cc-platform'
                                          WHEN '__idle__' THEN '__idle__' ELSE '__unallocated__' END AS allocation
                       FROM fct_chargeback WHERE run_id = 'demo-a'""")
        cost_by = defaultdict(float)
        for row in focus_rows:
            if row["x_Workload"]:
                cost_by[(row["x_RunId"], row["x_Workload"])] += row["EffectiveCost"]
        for (run, wid, tenant, queue, kind, pods, min_count, gpp, model, submit_h, state,
             preemptions, timeouts, partial) in WORKLOADS:
            start = RUNS[run][0]
            first = first_h.get((run, wid))
            end = None
            if state == "finished":
                end = start + timedelta(hours=last_h[(run, wid)])
            elif state == "rejected":
                end = start + timedelta(hours=submit_h)
            wait_h = (first if first is not None else RUNS[run][1]) - submit_h
            cost = round(cost_by[(run, wid)], 6)
            unservable = UNSERVABLE.get((run, wid))
            if unservable:
                outcome = "unservable"
            elif state == "finished":
                outcome = "finished"
            elif state in ("rejected", "pending_at_end") and cost > 0:
                outcome = "failed"
            else:
                outcome = "unfinished"
            # the GPUs asked while waiting, at the list price of the cheapest accepted model (the
            # fixture does not apply the pipeline's cap by what the cluster could have run)
            wait_gpu_hours = 0.0 if unservable else pods * gpp * wait_h
            cheapest_model = min(model.split("|") if model else PRICES, key=lambda m: PRICES[m][0])
            cheapest = PRICES[cheapest_model][0]
            idle_share = sum(v for k, v in workload_idle.items() if k[:2] == (run, wid))
            con.execute(
                "INSERT INTO fct_workloads VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run, wid, tenant, queue or None, _cluster_queue(queue), kind, pods, min_count, gpp, model,
                 start + timedelta(hours=submit_h),
                 None if first is None else start + timedelta(hours=first), end, state,
                 0.0 if state == "rejected" else wait_h * 3600.0, preemptions, timeouts, partial,
                 hours_by[(run, wid, "productive")], hours_by[(run, wid, "gang_wait")],
                 hours_by[(run, wid, "lost_to_preemption")], cost, outcome,
                 unservable[0] if unservable else None, wait_gpu_hours, wait_gpu_hours * cheapest,
                 idle_share, cost + idle_share],
            )
            for k in range(math.ceil(wait_h) if wait_gpu_hours > 0 else 0):  # the same, per hour waited
                con.execute("INSERT INTO fct_pending_demand VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [run, wid, tenant, start + timedelta(hours=submit_h + k), cheapest_model,
                             pods * gpp * min(1.0, wait_h - k), pods * gpp * min(1.0, wait_h - k) * cheapest])
            if unservable:
                con.execute(
                    "INSERT INTO fct_unservable_demand VALUES (?, ?, ?, ?, ?, ?, 'rejected', ?, ?, ?, ?,"
                    " ?, ?, ?, ?, ?, 0.0)",
                    [run, wid, tenant, _cluster_queue(queue), kind, unservable[0], pods, min_count, gpp,
                     model or None, pods * gpp, start + timedelta(hours=submit_h),
                     _phase(run, start + timedelta(hours=submit_h)), unservable[1],
                     pods * gpp * unservable[1]],
                )
        for run, wid, pod, node, gpus, h0, h1, usage_class in INTERVALS:
            start = RUNS[run][0]
            con.execute(
                "INSERT INTO fct_pod_intervals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run, wid, pod, node, _node_info(run, node)[0], gpus,
                 start + timedelta(hours=h0), start + timedelta(hours=h1), usage_class],
            )
        queue_frame = pd.DataFrame(  # noqa: F841 (read by the INSERT below)
            _queue_usage_rows(), columns=["run_id", "cluster_queue", "flavor", "ts", "admitted",
                                          "nominal", "limit", "borrowed"])
        con.execute("INSERT INTO fct_queue_usage SELECT run_id, cluster_queue, 'cohort-a', flavor, "
                    "ts, admitted, nominal, \"limit\", borrowed FROM queue_frame")
        for seq, (run, wid, hour, event, pod, node, gpus, reason, message) in enumerate(TIMELINE):
            start = RUNS[run][0]
            preemptor, position, length = TIMELINE_FACTS.get((run, wid, hour), (None, None, None))
            con.execute(
                "INSERT INTO fct_workload_timeline VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run, wid, seq, start + timedelta(hours=hour), hour * 3600.0, event, pod, node,
                 gpus, reason, message, preemptor, position, length],
            )
        # =SUM(A1) lost hours 18-20 (2 A100 GPUs at $2) to gang-2, another ClusterQueue's workload;
        # gang-2's own time-out threw nothing away (it never ran whole)
        con.executemany(
            "INSERT INTO fct_evictions VALUES (?, ?, ?, ?, 0, ?, ?, 1, ?, ?, ?, NULL, ?, ?)",
            [["demo-a", "=SUM(A1)", "ml-research", "fine-tune", datetime(2026, 11, 2, 20), "preempted",
              "gang-2", "team-o'brien", True, 4.0, 8.0],
             ["demo-a", "gang-2", "team-o'brien", "training", datetime(2026, 11, 2, 6), "timed_out",
              None, None, False, 0.0, 0.0]],
        )
        for run, (start, hours) in RUNS.items():
            used = sum(gpus * (h1 - h0) for r, _w, _p, node, gpus, h0, h1, _u in INTERVALS
                       if r == run and node == "node-h100-0")
            committed, contracted = 8.0 * hours, PRICES["H100"][1]
            con.execute(
                "INSERT INTO fct_commitment_utilization VALUES (?, ?, ?, 'gpu-h100', 1, 'H100', 'gpu',"
                " 'GPU-Hours', ?, ?, ?, ?, ?, ?, ?, 0.0, 0.0, 1.0, 0.0, 0.0)",
                [run, f"k8s://{run}/commitment/gpu-h100", datetime(start.year, start.month, 1),
                 committed, used, committed - used, committed * contracted, used * contracted,
                 (committed - used) * contracted, used / committed],
            )
        add_preemption_cascades(con, TIMELINE)
        con.execute("COMMIT")
    finally:
        con.close()
    return path


if __name__ == "__main__":  # handy for trying the dashboard: python tests/dashboards/fixture_db.py
    import sys

    print(build_fixture_db(Path(sys.argv[1] if len(sys.argv) > 1 else "fixture.duckdb")))
