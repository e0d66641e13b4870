"""Daily spend per team, for budgets and burn (`dashboards.budgets`)."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import IDLE_TENANT, _df


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
