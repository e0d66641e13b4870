"""Budgets and burn: spend to date against each team's (and cost centre's) monthly budget, a
forecast to the end of the month with its interval, and days whose spend or idle is anomalous
for the team or cost centre. Pure pandas over `dashboards.data.daily_team_spend` and
`dashboards.data.daily_label_spend`; no Streamlit.

Budgets file (CSV, or TOML with ``[[budget]]`` tables of the same keys)::

    team,cost_centre,month,budget_usd
    llm,research,2026-11,250000
    vision,research,2026-11,120000
    ,research,2026-11,400000        # a cost centre's own budget

A row with a team budgets that team; a row without a team budgets the cost centre it names.
Month is ``YYYY-MM``.

- **Spend** of a team is what it is charged (`fct_chargeback`, idle policy ``window``: its
  usage plus its share of the idle of the hours and GPU models it used), per UTC day. A cost
  centre's spend, where the workloads' pod labels carry one (label ``cost-center``, else
  ``cost_center``, or the key given: `CentreSpend`), is what the workloads carrying that value
  are charged, whatever their team (`fct_label_allocation`, the same policy); where no label
  carries one, it is its teams summed, by the cost centre the file's team rows name.
- **Forecast** to the end of the month: spend to date plus the ``m`` days left times the run
  rate, the mean daily spend over the ``n`` days of the month so far that HAVE cost records (a
  day before the run starts, or after it ends, is not a $0 day; a day with records and none of
  the team's spend is). The 95 % prediction interval of the future total, the days taken as
  independent draws and the mean itself estimated from the ``n`` days:
  ``m·mean ± t(0.975, n − 1)·s·√(m + m²/n)`` (``s`` the days' sample standard deviation,
  ``t`` Student's quantile); the low end never below the spend to date, no interval from fewer
  than 2 days. **Status**: ``over`` once spend to date passes the budget, ``trending
  over`` when the forecast does, else ``within``.
- **Anomalies**: a day whose spend or idle share is far from the team's (or label cost
  centre's) usual day: the modified z-score 0.6745·(x − median)/MAD above 3.5 (Iglewicz and
  Hoaglin), with the mean absolute deviation (× 1.2533) standing in when the MAD is 0; one
  with fewer than 5 days is not judged.
"""

from __future__ import annotations

import calendar
import csv
import io
import math
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from dashboards.errors import DashboardError

BUDGETS_ENV_VAR = "GPU_FINOPS_BUDGETS"  # the dashboard's budgets file (`dashboard --budgets`)
COST_CENTRE_LABEL_ENV_VAR = "GPU_FINOPS_COST_CENTRE_LABEL"  # `dashboard --cost-centre-label KEY`
BUDGET_COLUMNS = ("team", "cost_centre", "month", "budget_usd")
BURN_COLUMNS = ("scope", "name", "month", "budget_usd", "spend_to_date", "days_elapsed", "days_in_month",
                "days_observed", "forecast", "forecast_low", "forecast_high", "burn_pct", "status", "basis")
ANOMALY_COLUMNS = ("scope", "name", "day", "spend", "idle_cost", "idle_share", "spend_z", "idle_z", "flag")
Z_THRESHOLD = 3.5
MIN_DAYS = 5


@dataclass(frozen=True)
class CentreSpend:
    """Cost centres from a pod label: ``daily`` has cost_centre (the label's value), day, spend
    and idle_cost (`dashboards.data.daily_label_spend`)."""

    label_key: str
    daily: pd.DataFrame


def read_budgets(path: Path) -> pd.DataFrame:
    """team, cost_centre, month (the first day), budget_usd; one clear error per bad row. The
    index says where each row is in the file ("row 3", "budget[0]"), ``attrs["source"]`` the
    file's name (for `check_cost_centres`)."""
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
    records, places = [], []
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
        places.append(where)
    frame = pd.DataFrame(records, columns=list(BUDGET_COLUMNS), index=pd.Index(places, dtype=object))
    keys = frame.assign(who=frame["team"].fillna("centre:" + frame["cost_centre"].fillna("")))
    twice = keys[keys.duplicated(["who", "month"], keep=False)]
    if not twice.empty:
        raise DashboardError(f"{path.name}: {twice['who'].iloc[0]} has two budgets for {twice['month'].iloc[0]:%Y-%m}")
    frame.attrs["source"] = path.name
    return frame


def check_cost_centres(budgets: pd.DataFrame, centres: CentreSpend, run_id: str) -> None:
    """Refuse a cost centre's budget (a row without a team) naming a value of the label that no
    charged workload of the run carries: a typo would otherwise burn nothing, silently."""
    known = sorted(set(centres.daily["cost_centre"]))
    for where, row in budgets[budgets["team"].isna()].iterrows():
        if row["cost_centre"] not in known:
            shown = ", ".join(known[:10]) + (", …" if len(known) > 10 else "") if known else "none"
            raise DashboardError(f"{budgets.attrs.get('source', 'budgets')}: {where}, field 'cost_centre': no "
                                 f"workload of run {run_id!r} carries the label {centres.label_key}="
                                 f"{row['cost_centre']!r} (values: {shown})")


def student_t_quantile(probability: float, dof: int) -> float:
    """Student's t quantile for a whole number of degrees of freedom (``dof`` >= 1), by
    bisection on the closed form of P(|T| < t) (Abramowitz and Stegun 26.7.3 and 26.7.4), to
    1e-12: ``student_t_quantile(0.975, 4)`` = 2.776."""
    if dof < 1 or not 0.5 <= probability < 1:
        raise ValueError(f"t quantile needs dof >= 1 and 0.5 <= p < 1, got dof={dof}, p={probability}")
    inside = 2 * probability - 1  # P(|T| < t)

    def central(t: float) -> float:
        theta = math.atan(t / math.sqrt(dof))
        cos2 = math.cos(theta) ** 2
        if dof % 2:  # odd: 2/π (θ + sin θ cos θ (1 + 2/3 cos²θ + … ))
            term, total = 1.0, 1.0 if dof > 1 else 0.0
            for k in range(1, (dof - 1) // 2):
                term *= cos2 * (2 * k) / (2 * k + 1)
                total += term
            return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
        term, total = 1.0, 1.0  # even: sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … )
        for k in range(1, dof // 2):
            term *= cos2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total

    low, high = 0.0, 1.0
    while central(high) < inside:
        high *= 2
    while high - low > 1e-12 * max(1.0, high):
        middle = (low + high) / 2
        low, high = (middle, high) if central(middle) < inside else (low, middle)
    return (low + high) / 2


def forecast_interval(days: np.ndarray, days_left: int) -> tuple[float, float]:
    """(mean daily spend, half-width of the 95 % prediction interval of the sum of the next
    ``days_left`` days) from the observed ``days``: t(0.975, n − 1)·s·√(m + m²/n), the mean
    estimated from the n days; half-width NaN from fewer than 2 days."""
    n = len(days)
    mean = float(days.mean()) if n else 0.0
    if n < 2:
        return mean, (0.0 if days_left == 0 else float("nan"))
    spread = float(days.std(ddof=1))
    return mean, student_t_quantile(0.975, n - 1) * spread * math.sqrt(days_left + days_left ** 2 / n)


def burn(daily: pd.DataFrame, budgets: pd.DataFrame, as_of: date, centres: CentreSpend | None = None,
         run_days: tuple[date, date] | None = None) -> pd.DataFrame:
    """Per budget row: spend to date (days up to ``as_of``), forecast and interval, status.
    ``daily``: team, day, spend, idle_cost (`dashboards.data.daily_team_spend`); ``centres``:
    the cost centres' spend from a pod label, or None to sum a cost centre's teams (the team
    rows' cost_centre). ``basis`` says which: ``team``, ``label:<key>`` or ``teams``.
    ``run_days``: the first and last day with cost records (`dashboards.data.run_date_range`;
    default: the first and last day of ``daily``); only those days are observed."""
    columns = list(BURN_COLUMNS)
    if budgets.empty:
        return pd.DataFrame(columns=columns)
    daily = daily.assign(day=pd.to_datetime(daily["day"]).dt.date)
    if run_days is None:
        run_days = (min(daily["day"]), max(daily["day"])) if not daily.empty else (as_of, as_of)
    by_label = None if centres is None else \
        centres.daily.assign(day=pd.to_datetime(centres.daily["day"]).dt.date)
    mapping = budgets.dropna(subset=["team", "cost_centre"]).drop_duplicates("team").set_index("team")["cost_centre"]
    rows = []
    for budget in budgets.itertuples():
        month: date = budget.month
        days_in_month = calendar.monthrange(month.year, month.month)[1]
        last = min(as_of, date(month.year, month.month, days_in_month))
        if isinstance(budget.team, str):
            scope, name, basis = "team", budget.team, "team"
            spent = daily[daily["team"] == budget.team]
        elif by_label is not None and centres is not None:
            scope, name, basis = "cost_centre", budget.cost_centre, f"label:{centres.label_key}"
            spent = by_label[by_label["cost_centre"] == budget.cost_centre]
        else:
            scope, name, basis = "cost_centre", budget.cost_centre, "teams"
            spent = daily[daily["team"].isin([t for t, c in mapping.items() if c == budget.cost_centre])]
        spent = spent[(spent["day"] >= month) & (spent["day"] <= last)]
        per_day = spent.groupby("day")["spend"].sum()
        elapsed = max(0, (last - month).days + 1)
        first_seen, last_seen = max(month, run_days[0]), min(last, run_days[1])
        observed = pd.date_range(first_seen, last_seen).date if first_seen <= last_seen else []
        values = per_day.reindex(observed, fill_value=0.0).to_numpy(dtype=float)
        to_date = float(per_day.sum())
        left = days_in_month - elapsed
        mean, half = forecast_interval(values, left)
        forecast = to_date + left * mean
        status = "over" if to_date > budget.budget_usd else "trending over" if forecast > budget.budget_usd else "within"
        rows.append({"scope": scope, "name": name, "month": month.strftime("%Y-%m"), "budget_usd": budget.budget_usd,
                     "spend_to_date": round(to_date, 2), "days_elapsed": elapsed, "days_in_month": days_in_month,
                     "days_observed": len(values), "forecast": round(forecast, 2),
                     "forecast_low": round(max(to_date, forecast - half), 2) if math.isfinite(half) else math.nan,
                     "forecast_high": round(forecast + half, 2) if math.isfinite(half) else math.nan,
                     "burn_pct": round(to_date / budget.budget_usd, 4) if budget.budget_usd else math.nan,
                     "status": status, "basis": basis})
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


def anomalies(daily: pd.DataFrame, centres: CentreSpend | None = None) -> pd.DataFrame:
    """The team-days (scope ``team``) and, with ``centres``, the days of each value of the
    cost-centre label (scope ``cost_centre``) whose spend or idle share is anomalous for it."""
    groups = [("team", daily.rename(columns={"team": "name"}))]
    if centres is not None:
        groups.append(("cost_centre", centres.daily.rename(columns={"cost_centre": "name"})))
    found = []
    for scope, frame in groups:
        for name, days in frame.groupby("name", sort=True):
            if len(days) < MIN_DAYS:
                continue
            days = days.sort_values("day").assign(
                idle_share=lambda d: (d["idle_cost"] / d["spend"].where(d["spend"] > 0)).fillna(0.0))
            spend_z, idle_z = modified_z(days["spend"]), modified_z(days["idle_share"])
            for row, sz, iz in zip(days.itertuples(), spend_z, idle_z, strict=True):
                flags = [f"spend {'high' if sz > 0 else 'low'}" for _ in [0] if abs(sz) > Z_THRESHOLD]
                flags += [f"idle {'high' if iz > 0 else 'low'}" for _ in [0] if abs(iz) > Z_THRESHOLD]
                if flags:
                    found.append({"scope": scope, "name": name, "day": row.day, "spend": round(row.spend, 2),
                                  "idle_cost": round(row.idle_cost, 2), "idle_share": round(row.idle_share, 4),
                                  "spend_z": round(float(sz), 2), "idle_z": round(float(iz), 2),
                                  "flag": ", ".join(flags)})
    return pd.DataFrame(found, columns=list(ANOMALY_COLUMNS))


def teams_to_name(burned: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(over budget, trending over): the names the scheduled report lists, a cost centre as
    ``cost centre <name>``."""
    named = burned["name"].where(burned["scope"] == "team", "cost centre " + burned["name"].astype(str))
    over = named[burned["status"] == "over"].tolist()
    trending = named[burned["status"] == "trending over"].tolist()
    return over, trending
