"""Showback grouped by an allocation key: a team (``fct_chargeback``) or a pod label
(``fct_label_allocation``, OpenCost's ``label:<name>`` aggregation). The rule lives in the
pipeline; this module only chooses the mart and filters it. Workloads without the label are
the mart's ``__unallocated__`` group (shown as "Unlabelled"), the platform line ``__idle__``."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pandas as pd

from dashboards.data.core import IDLE_TENANT, Filters, _df, _execute
from dashboards.data.costs import _check_policy, team_showback
from dashboards.errors import DashboardError

UNLABELLED = "__unallocated__"
"""The mart's group of workloads without the label (OpenCost's name); pages say "Unlabelled"."""

_LABEL_PREFIX = "label:"


@dataclass(frozen=True)
class GroupBy:
    """``team`` or ``label:<key>``."""

    label_key: str | None = None  # None: by team

    @classmethod
    def parse(cls, text: str) -> GroupBy:
        value = text.strip()
        if value in ("team", "tenant"):
            return cls(None)
        if value.startswith(_LABEL_PREFIX) and value[len(_LABEL_PREFIX):].strip():
            return cls(value[len(_LABEL_PREFIX):].strip())
        raise DashboardError(f"--group-by {text!r}: use team or label:<key> (e.g. label:cost-center)")

    @property
    def text(self) -> str:
        return "team" if self.label_key is None else f"{_LABEL_PREFIX}{self.label_key}"


def label_keys(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """The label keys some workload of the run carries (the keys showback can group by)."""
    found = _execute(con, "SELECT DISTINCT label_key FROM fct_label_allocation WHERE run_id = $run_id "
                          "ORDER BY label_key", {"run_id": run_id}).fetchall()
    return [key for (key,) in found]


def check_label_key(con: duckdb.DuckDBPyConnection, run_id: str, key: str) -> str:
    keys = label_keys(con, run_id)
    if key not in keys:
        known = ", ".join(keys) if keys else "none: its trace has no labels column, or an empty one"
        raise DashboardError(f"no workload of run {run_id!r} carries the label {key!r} (keys: {known})")
    return key


_ALLOCATION_WHERE = """
    a.run_id = $run_id AND a.idle_policy = $policy AND a.label_key = $label_key
    AND ($ts_from::TIMESTAMP IS NULL OR a.charge_period_start >= $ts_from::TIMESTAMP)
    AND ($ts_to::TIMESTAMP IS NULL OR a.charge_period_start < $ts_to::TIMESTAMP)
    AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], a.gpu_model))
    AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], a.tenant))
"""


def label_showback(con: duckdb.DuckDBPyConnection, filters: Filters, label_key: str,
                   idle_policy: str = "separate") -> pd.DataFrame:
    """Per value of ``label_key`` (plus ``__unallocated__`` and the platform line ``__idle__``):
    GPU-hours held, usage cost, the idle carried under ``idle_policy`` and what is charged.

    Columns: allocation, gpu_hours, usage_cost, list_cost, idle_share_gpu_hours,
    idle_share_cost, charged_cost, share (of the selection's charged cost). Unfiltered, the
    charged costs add up to the run's FOCUS total under every policy (audit
    label_allocation_balances)."""
    return _df(
        con,
        f"""
        SELECT a.allocation,
               sum(a.gpu_hours) AS gpu_hours,
               sum(a.usage_cost) AS usage_cost,
               sum(a.list_cost) AS list_cost,
               sum(a.idle_share_gpu_hours) AS idle_share_gpu_hours,
               sum(a.idle_share_cost) AS idle_share_cost,
               sum(a.charged_cost) AS charged_cost,
               sum(a.charged_cost) / nullif(sum(sum(a.charged_cost)) OVER (), 0) AS share
        FROM fct_label_allocation a
        WHERE {_ALLOCATION_WHERE}
        GROUP BY a.allocation
        HAVING sum(abs(a.charged_cost)) > 0
        ORDER BY a.allocation = $idle, a.allocation = $unlabelled, charged_cost DESC, a.allocation
        """,
        {**filters.params(), "policy": _check_policy(idle_policy), "label_key": label_key,
         "idle": IDLE_TENANT, "unlabelled": UNLABELLED},
    )


def showback(con: duckdb.DuckDBPyConnection, filters: Filters, group_by: GroupBy,
             idle_policy: str = "separate") -> pd.DataFrame:
    """One showback table whatever the grouping: its first column is ``group`` (a team, or a
    label value), then gpu_hours, usage_cost, list_cost, idle_share_gpu_hours,
    idle_share_cost, charged_cost, share."""
    columns = ["gpu_hours", "usage_cost", "list_cost", "idle_share_gpu_hours", "idle_share_cost",
               "charged_cost", "share"]
    if group_by.label_key is None:
        frame = team_showback(con, filters, idle_policy).rename(columns={"tenant": "group"})
    else:
        check_label_key(con, filters.run_id, group_by.label_key)
        frame = label_showback(con, filters, group_by.label_key, idle_policy).rename(columns={"allocation": "group"})
    return frame[["group", *columns]]
