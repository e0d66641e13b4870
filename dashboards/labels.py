"""What a person reads in place of the marts' internal names: the platform line, usage classes,
idle causes, outcomes, reasons, and readable column headers with their units.

Pure functions over pandas frames (no Streamlit): the pages and the report's HTML and Markdown
tables show a frame through ``shown_frame`` (values in words, durations in human units) and its
headers through ``header`` (``readable_table`` does both); CSV files keep the marts' column names
and raw numbers, which is what a spreadsheet or a script joins on, with the platform line named
as everywhere else (``csv_frame``).
"""

from __future__ import annotations

import re

import pandas as pd

from dashboards import cells
from dashboards.data.core import IDLE_TENANT
from pipeline.registry import IDLE_CAUSES

PLATFORM_LINE = "Unallocated (idle)"
"""The idle pseudo-tenant (``__idle__`` in the marts) as the pages name it."""

UNLABELLED = "Unlabelled"
"""Workloads without the label of an allocation by label (``__unallocated__`` in the marts)."""

VALUE_LABELS = {
    IDLE_TENANT: PLATFORM_LINE,
    "__unallocated__": UNLABELLED,
    # usage classes
    "productive": "Productive",
    "gang_wait": "Partial placement (gang wait)",
    "lost_to_preemption": "Lost to preemption",
    "idle": "Idle",
    # idle causes: the pipeline's registry names them
    **{cause.name: cause.label for cause in IDLE_CAUSES},
    "gang_wait (partial placement)": "Partial placement (gang wait)",
    # final states and outcomes
    "finished": "Finished",
    "failed": "Failed",
    "unfinished": "Unfinished",
    "pending_at_end": "Waiting at the end of the run",
    "running_at_end": "Running at the end of the run",
    "rejected": "Rejected",
    "unservable": "Unservable",
    "no_attempt_yet": "No attempt yet",
}

# Columns whose values are names from the marts' vocabulary (shown through VALUE_LABELS).
LABELLED_COLUMNS = ("tenant", "cause", "usage_class", "idle_reason", "final_state", "outcome",
                    "latest_reason", "kind_of_idle", "part")

_HEADER_WORDS = {"gpu": "GPU", "gpus": "GPUs", "cpu": "CPU", "usd": "$", "pct": "%", "id": "ID",
                 "p95": "p95", "ts": "time", "h": "(h)", "s": "(s)", "sku": "SKU"}
_HEADERS = {
    "tenant": "Team", "effective_cost": "Effective cost ($)", "list_cost": "List cost ($)",
    "gpu_hours": "GPU-hours", "workload_id": "Workload", "wait_s": "Waited",
    "waited_s": "Waited", "longest_wait_s": "Longest wait", "pending_demand_list_value": "Pending demand at list price ($, not spend)",
    "pending_demand_gpu_hours": "GPU-hours demanded while pending", "median_wait_h": "Median wait (h)",
    "charged_cost": "Charged ($)", "usage_cost": "Usage ($)", "idle_share_cost": "Idle share ($)",
    "share": "Share", "gang_wait_gpu_hours": "Partial placement GPU-hours",
    "gang_wait_cost": "Partial placement ($)", "min_count": "Quorum (min count)",
    "gpus_per_pod": "GPUs per pod", "gpus_requested": "GPUs requested",
    "latest_reason": "Latest reason", "latest_message": "Latest message",
    "reason_ts": "Latest attempt", "submit_ts": "Submitted", "period_start": "Period",
    "cost_per_run": "Cost per run ($)", "usage_cost_per_run": "Usage per run ($)",
    "idle_share_per_run": "Idle carried per run ($)", "allocation": "Group", "group": "Group", "total_cost": "Total ($)", "runs": "Runs",
    "final_state": "Final state", "usage_class": "Usage class", "cause": "Cause",
    "lost_gpu_hours": "GPU-hours lost", "lost_cost": "Lost ($)",
    "lost_cost_per_eviction": "Lost per eviction ($)", "time_s": "Time since start",
    # preemption chains (fct_preemption_cascades)
    "chain_id": "Chain", "origin": "Origin preemptor", "origin_priority": "Its priority",
    "origin_kind": "Its kind", "origin_tenant": "Its team", "preempted_pods": "Pods preempted",
    "preempted_in_cascade": "Of them in the cascade", "depth": "Deepest level",
    "first_preempted_at": "First preemption",
}
_SNAKE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
_GPU_HOURS = re.compile(r"gpu_hours(?=_|$)|gpu_h(?=_|$)")


def words(value: object) -> object:
    """A mart value as a person reads it: the label of a known name, ``snake_case`` as words."""
    if not isinstance(value, str):
        return value
    if value in VALUE_LABELS:
        return VALUE_LABELS[value]
    if value.startswith("idle: "):  # runs_compared's "idle: <cause>"
        return f"Idle: {str(words(value[6:])).lower()}"
    if _SNAKE.match(value):
        text = value.replace("_", " ")
        return text[0].upper() + text[1:]
    return value


def allocation_name(value: object) -> object:
    """A label value as it is (it is the cluster's own text), the two reserved groups in words."""
    return VALUE_LABELS.get(value, value) if value in (IDLE_TENANT, "__unallocated__") else value


def readable_values(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the vocabulary columns (team, cause, usage class, state, reason) relabelled."""
    labelled = [c for c in LABELLED_COLUMNS if c in df.columns]
    if "allocation" in df.columns:  # label values are shown as written: only the reserved groups change
        df = df.assign(allocation=df["allocation"].map(allocation_name))
    if not labelled:
        return df
    return df.assign(**{c: df[c].map(words) for c in labelled})


# Duration columns in seconds: shown as "3.4 h", "12 min" (the CSV keeps the seconds).
DURATION_COLUMNS = ("wait_s", "waited_s", "longest_wait_s", "mean_wait_s", "p95_wait_s",
                    "time_s", "duration_s", "checkpoint_interval_s")


def shown_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as a person reads it: the marts' vocabulary in words (``Unallocated (idle)`` for
    the platform line), durations in human units."""
    shown = readable_values(df)
    durations = {c: shown[c].map(duration) for c in DURATION_COLUMNS if c in shown.columns
                 and pd.api.types.is_numeric_dtype(shown[c])}
    return shown.assign(**durations) if durations else shown


def readable_table(df: pd.DataFrame) -> pd.DataFrame:
    """``shown_frame`` with readable headers and times to the minute: a table for a report."""
    shown = shown_frame(df)
    times = {c: shown[c].dt.strftime("%Y-%m-%d %H:%M") for c in shown.columns
             if pd.api.types.is_datetime64_any_dtype(shown[c])}
    shown = cells.written(shown.assign(**times) if times else shown)
    return shown.rename(columns={c: _capital(_duration_header(str(c)) if c in DURATION_COLUMNS else header(str(c)))
                                 for c in shown.columns})


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` for a CSV file: the marts' columns and raw numbers, the platform line by name."""
    if "tenant" not in df.columns:
        return df
    return df.assign(tenant=df["tenant"].replace({IDLE_TENANT: PLATFORM_LINE}))


def _duration_header(column: str) -> str:
    return _HEADERS.get(column) or header(column.removesuffix("_s"))


def header(column: str) -> str:
    """A readable column header with its unit: ``effective_cost`` -> ``Effective cost ($)``,
    ``idle_quota_gpu_hours`` -> ``Idle quota GPU-hours``."""
    name = str(column)
    if name in _HEADERS:
        return _HEADERS[name]
    if not _SNAKE.match(name):
        return name
    # whole words only: gpu_hour_share must not read "GPU-hoursour share"
    text = _GPU_HOURS.sub("GPU-hours", name).replace("gpu_hour", "GPU-hour")
    parts = [_HEADER_WORDS.get(part, part) for part in text.split("_")]
    if parts and parts[-1] == "cost":
        parts.append("($)")
    sentence = " ".join(parts)
    return sentence[0].upper() + sentence[1:]


def duration(seconds: float | None) -> str:
    """A duration as a person reads it: 45 s, 12 min, 3.4 h, 2.1 days; an em dash if unknown."""
    if seconds is None or seconds != seconds:
        return "—"
    value = float(seconds)
    if abs(value) < 60:
        return f"{value:,.0f} s"
    if abs(value) < 3600:
        return f"{value / 60:,.0f} min"
    if abs(value) < 48 * 3600:
        return f"{value / 3600:,.1f} h"
    return f"{value / 86400:,.1f} days"


def _vega_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def vega_label_expr() -> str:
    """A Vega expression that shows a chart's axis or legend labels in words (the data and the
    colour scales keep the marts' names): ``gang_wait`` -> ``Partial placement (gang wait)``,
    ``__idle__`` -> ``Unallocated (idle)``, ``idle: no_demand`` -> ``Idle: no demand``."""
    names = list(VALUE_LABELS) + [f"idle: {k}" for k in VALUE_LABELS if not k.startswith("_")]
    expression = "datum.label"
    for name in reversed(names):
        expression = (f"datum.label == {_vega_string(name)} ? {_vega_string(str(words(name)))} : "
                      f"{expression}")
    return expression


LABEL_EXPR = vega_label_expr()
