"""Daily spend per team and per cost centre, for budgets and burn (`dashboards.budgets`)."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.allocation import UNLABELLED, check_label_key, label_keys
from dashboards.data.core import IDLE_TENANT, _df

COST_CENTRE_LABEL_KEYS = ("cost-center", "cost_center")
"""The pod label keys that carry a workload's cost centre, tried in this order when no key is given."""


def daily_team_spend(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame:
    """team, day (UTC), spend (what the team is charged: fct_chargeback, idle policy window)
    and idle_cost (the idle share within it), one row per team and day with charges."""
    return _df(con, """
        SELECT tenant AS team, CAST(date_trunc('day', charge_period_start) AS DATE) AS day,
               sum(charged_cost) AS spend, sum(idle_share_cost) AS idle_cost
        FROM fct_chargeback
        WHERE run_id = $run_id AND idle_policy = 'window' AND tenant <> $idle
        GROUP BY ALL ORDER BY team, day
    """, {"run_id": run_id, "idle": IDLE_TENANT})


def cost_centre_label(con: duckdb.DuckDBPyConnection, run_id: str, label_key: str | None = None) -> str | None:
    """The pod label key that carries the run's cost centres: ``label_key`` (an error when no
    workload of the run carries it), else the first of `COST_CENTRE_LABEL_KEYS` some workload
    carries, else None (the budgets file's team → cost centre mapping then groups the spend)."""
    if label_key is not None:
        return check_label_key(con, run_id, label_key)
    carried = set(label_keys(con, run_id))
    return next((key for key in COST_CENTRE_LABEL_KEYS if key in carried), None)


def daily_label_spend(con: duckdb.DuckDBPyConnection, run_id: str, label_key: str) -> pd.DataFrame:
    """cost_centre (the value of ``label_key``), day (UTC), spend and idle_cost: what the
    workloads carrying that value are charged (fct_label_allocation, idle policy window: their
    usage plus the idle shares they carry), whatever their team. Workloads without the label
    and the platform line are left out. One row per value and day with charges."""
    return _df(con, """
        SELECT allocation AS cost_centre, CAST(date_trunc('day', charge_period_start) AS DATE) AS day,
               sum(charged_cost) AS spend, sum(idle_share_cost) AS idle_cost
        FROM fct_label_allocation
        WHERE run_id = $run_id AND idle_policy = 'window' AND label_key = $label_key
              AND allocation NOT IN ($unlabelled, $idle)
        GROUP BY ALL ORDER BY cost_centre, day
    """, {"run_id": run_id, "label_key": label_key, "unlabelled": UNLABELLED, "idle": IDLE_TENANT})


def label_values(con: duckdb.DuckDBPyConnection, run_id: str, label_key: str) -> list[str]:
    """The values of ``label_key`` the run's workloads carry (sorted)."""
    found = _df(con, """
        SELECT DISTINCT allocation FROM fct_label_allocation
        WHERE run_id = $run_id AND label_key = $label_key AND allocation NOT IN ($unlabelled, $idle)
        ORDER BY allocation
    """, {"run_id": run_id, "label_key": label_key, "unlabelled": UNLABELLED, "idle": IDLE_TENANT})
    return [str(value) for value in found["allocation"]]
