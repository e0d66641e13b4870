"""Advice (``gpu-finops advise quotas``): the trials of the quota study and, per team, today's
figures beside the recommended point's. Read from the tables the command writes into its
database (advice_trials, advice_teams); a database without them gives empty frames."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import _df, table_columns

ADVICE_TRIAL_COLUMNS = ("trial", "state", "feasible", "pareto", "recommended", "idle_cost", "cost_of_delay",
                        "total", "shortfall")
# the spread over the replay seeds (`advise quotas --seeds`): absent from a database written before it
ADVICE_SEED_COLUMNS = ("seeds", "idle_cost_ci95", "cost_of_delay_ci95", "total_ci95", "improvement", "improvement_ci95",
                       "beats_today")
TEAM_METRICS = (("p95_wait_h", "p95 wait (h)"), ("gpu_hour_share", "share of GPU-hours"),
                ("cost_of_delay", "cost of delay (USD)"), ("median_wait_h", "median wait (h)"),
                ("gpu_hours", "GPU-hours"), ("still_pending", "still pending at the end"))


def advice_trials(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per trial (its figures and whether it is feasible, on the Pareto front,
    recommended), plus a row ``today`` for the current manifests."""
    columns = table_columns(con, "advice_trials")
    if not set(ADVICE_TRIAL_COLUMNS) <= columns:
        return pd.DataFrame(columns=list(ADVICE_TRIAL_COLUMNS))
    chosen = [*ADVICE_TRIAL_COLUMNS, *(c for c in ADVICE_SEED_COLUMNS if c in columns)]
    return _df(con, f"SELECT {', '.join(chosen)} "
                    "FROM advice_trials ORDER BY try_cast(trial AS INTEGER) NULLS LAST, trial")


def advice_teams(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per team and setting (today, recommended): the figures of `TEAM_METRICS`, long by setting."""
    columns = table_columns(con, "advice_teams")
    if "team" not in columns:
        return pd.DataFrame(columns=["team", "setting", *(m for m, _ in TEAM_METRICS)])
    wide = _df(con, "SELECT * FROM advice_teams ORDER BY team")
    frames = []
    for setting in ("today", "recommended"):
        part = pd.DataFrame({"team": wide["team"], "setting": setting})
        for metric, _ in TEAM_METRICS:
            part[metric] = wide.get(f"{setting}_{metric}")
        frames.append(part)
    return pd.concat(frames, ignore_index=True)
