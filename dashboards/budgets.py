"""Budgets and burn: spend to date against each team's (and cost centre's) monthly budget, a
forecast to the end of the month with its interval, and days whose spend or idle is anomalous
for the team. Pure pandas over `dashboards.data.daily_team_spend`; no Streamlit.

Budgets file (CSV, or TOML with ``[[budget]]`` tables of the same keys)::

    team,cost_centre,month,budget_usd
    llm,research,2026-11,250000
    vision,research,2026-11,120000
    ,research,2026-11,400000        # a cost centre's own budget: its teams summed

A row with a team budgets that team; the cost centre it names groups the team's spend into the
centre's, and a row without a team budgets the centre. Month is ``YYYY-MM``.

- **Spend** is what the team is charged (`fct_chargeback`, idle policy ``window``: its usage
  plus its share of the idle of the hours and GPU models it used), per UTC day.
- **Forecast** to the end of the month: spend to date plus the days left times the mean daily
  spend so far; the interval is ± 1.96 standard deviations of a sum of that many days
  (the days' spend taken as independent draws of the days so far), the low end never below
  the spend to date. **Status**: ``over`` once spend to date passes the budget, ``trending
  over`` when the forecast does, else ``within``.
- **Anomalies**: a day whose spend or idle share is far from the team's usual day: the modified
  z-score 0.6745·(x − median)/MAD above 3.5 (Iglewicz and Hoaglin), with the mean absolute
  deviation (× 1.2533) standing in when the MAD is 0; a team with fewer than 5 days is not
  judged.
"""

from __future__ import annotations

import calendar
import csv
import io
import math
import tomllib
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from dashboards.errors import DashboardError

BUDGETS_ENV_VAR = "GPU_FINOPS_BUDGETS"  # the dashboard's budgets file (`dashboard --budgets`)
BUDGET_COLUMNS = ("team", "cost_centre", "month", "budget_usd")
Z_THRESHOLD = 3.5
MIN_DAYS = 5


def read_budgets(path: Path) -> pd.DataFrame:
    """team, cost_centre, month (the first day), budget_usd; one clear error per bad row."""
    path = Path(path)
    if not path.is_file():
        raise DashboardError(f"{path.name}: file not found")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".toml":
        try:
            rows = tomllib.loads(text).get("budget", [])
        except tomllib.TOMLDecodeError as error:
            raise DashboardError(f"{path.name}: not valid TOML: {error}") from None
        if not isinstance(rows, list):
            raise DashboardError(f"{path.name}: field 'budget': must be [[budget]] tables")
        numbered = [(f"budget[{i}]", row) for i, row in enumerate(rows)]
    else:
        reader = csv.DictReader(io.StringIO(text))
        missing = [c for c in ("month", "budget_usd") if c not in (reader.fieldnames or [])]
        if missing:
            raise DashboardError(f"{path.name}: missing column(s) {', '.join(missing)} "
                                 f"(columns: {', '.join(BUDGET_COLUMNS)})")
        numbered = [(f"row {i}", row) for i, row in enumerate(reader, start=2)]
    records = []
    for where, row in numbered:
        if not isinstance(row, dict):
            raise DashboardError(f"{path.name}: {where}: must be a table")
        team = str(row.get("team") or "").strip() or None
        centre = str(row.get("cost_centre") or "").strip() or None
        if team is None and centre is None:
            raise DashboardError(f"{path.name}: {where}, field 'team': give a team or a cost_centre")
        try:
            year, month = (int(p) for p in str(row.get("month", "")).strip().split("-"))
            first = date(year, month, 1)
        except ValueError:
            raise DashboardError(f"{path.name}: {where}, field 'month': YYYY-MM, got {row.get('month')!r}") from None
        try:
            budget = float(row.get("budget_usd", ""))
        except (TypeError, ValueError):
            budget = float("nan")
        if not math.isfinite(budget) or budget < 0:
            raise DashboardError(f"{path.name}: {where}, field 'budget_usd': a number >= 0, "
                                 f"got {row.get('budget_usd')!r}")
        records.append({"team": team, "cost_centre": centre, "month": first, "budget_usd": budget})
    frame = pd.DataFrame(records, columns=list(BUDGET_COLUMNS))
    keys = frame.assign(who=frame["team"].fillna("centre:" + frame["cost_centre"].fillna("")))
    twice = keys[keys.duplicated(["who", "month"], keep=False)]
    if not twice.empty:
        raise DashboardError(f"{path.name}: {twice['who'].iloc[0]} has two budgets for {twice['month'].iloc[0]:%Y-%m}")
    return frame


def burn(daily: pd.DataFrame, budgets: pd.DataFrame, as_of: date) -> pd.DataFrame:
    """Per budget row: spend to date (days up to ``as_of``), forecast and interval, status.
    ``daily``: team, day, spend, idle_cost (`dashboards.data.daily_team_spend`)."""
    columns = ["scope", "name", "month", "budget_usd", "spend_to_date", "days_elapsed", "days_in_month",
               "forecast", "forecast_low", "forecast_high", "burn_pct", "status"]
    if budgets.empty:
        return pd.DataFrame(columns=columns)
    daily = daily.assign(day=pd.to_datetime(daily["day"]).dt.date)
    centres = budgets.dropna(subset=["team", "cost_centre"]).drop_duplicates("team").set_index("team")["cost_centre"]
    rows = []
    for budget in budgets.itertuples():
        month: date = budget.month
        days_in_month = calendar.monthrange(month.year, month.month)[1]
        last = min(as_of, date(month.year, month.month, days_in_month))
        if isinstance(budget.team, str):
            scope, name, teams = "team", budget.team, [budget.team]
        else:
            scope, name = "cost_centre", budget.cost_centre
            teams = [t for t, c in centres.items() if c == budget.cost_centre]
        spent = daily[daily["team"].isin(teams) & (daily["day"] >= month) & (daily["day"] <= last)]
        per_day = spent.groupby("day")["spend"].sum()
        elapsed = max(0, (last - month).days + 1)
        values = per_day.reindex(pd.date_range(month, last).date, fill_value=0.0).to_numpy() if elapsed else np.array([])
        to_date = float(values.sum())
        left = days_in_month - elapsed
        mean = float(values.mean()) if elapsed else 0.0
        spread = float(values.std(ddof=1)) if elapsed > 1 else 0.0
        forecast = to_date + left * mean
        half = 1.96 * spread * math.sqrt(left)
        status = "over" if to_date > budget.budget_usd else "trending over" if forecast > budget.budget_usd else "within"
        rows.append({"scope": scope, "name": name, "month": month.strftime("%Y-%m"), "budget_usd": budget.budget_usd,
                     "spend_to_date": round(to_date, 2), "days_elapsed": elapsed, "days_in_month": days_in_month,
                     "forecast": round(forecast, 2), "forecast_low": round(max(to_date, forecast - half), 2),
                     "forecast_high": round(forecast + half, 2),
                     "burn_pct": round(to_date / budget.budget_usd, 4) if budget.budget_usd else None,
                     "status": status})
    return pd.DataFrame(rows, columns=columns)


def modified_z(values: pd.Series) -> pd.Series:
    """0.6745·(x − median)/MAD; the mean absolute deviation × 1.2533 when the MAD is 0; 0 when
    every value is equal."""
    median = values.median()
    mad = (values - median).abs().median()
    if mad > 0:
        return 0.6745 * (values - median) / mad
    mean_ad = (values - median).abs().mean()
    if mean_ad > 0:
        return (values - median) / (1.2533 * mean_ad)
    return values * 0.0


def anomalies(daily: pd.DataFrame) -> pd.DataFrame:
    """The team-days whose spend or idle share is anomalous for that team."""
    columns = ["team", "day", "spend", "idle_cost", "idle_share", "spend_z", "idle_z", "flag"]
    found = []
    for team, days in daily.groupby("team", sort=True):
        if len(days) < MIN_DAYS:
            continue
        days = days.sort_values("day").assign(
            idle_share=lambda d: (d["idle_cost"] / d["spend"].where(d["spend"] > 0)).fillna(0.0))
        spend_z, idle_z = modified_z(days["spend"]), modified_z(days["idle_share"])
        for row, sz, iz in zip(days.itertuples(), spend_z, idle_z, strict=True):
            flags = [f"spend {'high' if sz > 0 else 'low'}" for _ in [0] if abs(sz) > Z_THRESHOLD]
            flags += [f"idle {'high' if iz > 0 else 'low'}" for _ in [0] if abs(iz) > Z_THRESHOLD]
            if flags:
                found.append({"team": team, "day": row.day, "spend": round(row.spend, 2),
                              "idle_cost": round(row.idle_cost, 2), "idle_share": round(row.idle_share, 4),
                              "spend_z": round(float(sz), 2), "idle_z": round(float(iz), 2), "flag": ", ".join(flags)})
    return pd.DataFrame(found, columns=columns)


def teams_to_name(burned: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(over budget, trending over): the names the scheduled report lists."""
    over = burned.loc[burned["status"] == "over", "name"].tolist()
    trending = burned.loc[burned["status"] == "trending over", "name"].tolist()
    return over, trending
