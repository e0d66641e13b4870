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
Month is ``YYYY-MM``. The file is all or nothing (`read_budgets`, `check_names`): a row wider
or narrower than the header (an unquoted ``5,000``), a budget that is not plain decimal text
>= 0, a name with an invisible character, a team the run does not have or a cost centre
nothing carries stops with one line naming the file, row and field.

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
import re
import reprlib
import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from dashboards.errors import DashboardError
from scheduler.eventlog.text import parse_toml

BUDGETS_ENV_VAR = "GPU_FINOPS_BUDGETS"  # the dashboard's budgets file (`dashboard --budgets`)
COST_CENTRE_LABEL_ENV_VAR = "GPU_FINOPS_COST_CENTRE_LABEL"  # `dashboard --cost-centre-label KEY`
BUDGET_COLUMNS = ("team", "cost_centre", "month", "budget_usd")
BURN_COLUMNS = ("scope", "name", "month", "budget_usd", "spend_to_date", "days_elapsed", "days_in_month",
                "days_observed", "forecast", "forecast_low", "forecast_high", "burn_pct", "status", "basis")
ANOMALY_COLUMNS = ("scope", "name", "day", "spend", "idle_cost", "idle_share", "spend_z", "idle_z", "flag")
Z_THRESHOLD = 3.5
MIN_BASELINE_DAYS = 4  # earlier days a day is judged against


@dataclass(frozen=True)
class CentreSpend:
    """Cost centres from a pod label: ``daily`` has cost_centre (the label's value), day, spend
    and idle_cost (`dashboards.data.daily_label_spend`)."""

    label_key: str
    daily: pd.DataFrame


_MONTH = re.compile(r"(\d{4})-(\d{2})", re.ASCII)
# a plain decimal: "5,000" (a thousands separator), "5_000", "nan", "inf" and "$5" are refused
_AMOUNT = re.compile(r"\+?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)


def read_budgets(path: Path) -> pd.DataFrame:
    """team, cost_centre, month (the first day), budget_usd; one clear error per bad row. The
    index says where each row is in the file ("row 3", "budget[0]"), ``attrs["source"]`` the
    file's name (for `check_names`)."""
    path = Path(path)
    if not path.is_file():
        raise DashboardError(f"{path.name}: file not found")
    try:
        text = path.read_bytes().decode("utf-8-sig")  # a spreadsheet's "CSV UTF-8" starts with a BOM
    except UnicodeDecodeError as error:
        raise DashboardError(f"{path.name}: not UTF-8 text (byte {error.start})") from None
    if path.suffix.lower() == ".toml":
        numbered = _toml_rows(path.name, text)
    else:
        numbered = _csv_rows(path.name, text)
    records, places = [], []
    for where, row in numbered:
        if not isinstance(row, dict):
            raise DashboardError(f"{path.name}: {where}: must be a table")
        team = _name(path.name, where, row, "team")
        centre = _name(path.name, where, row, "cost_centre")
        if team is None and centre is None:
            raise DashboardError(f"{path.name}: {where}, field 'team': give a team or a cost_centre")
        records.append({"team": team, "cost_centre": centre, "month": _month(path.name, where, row.get("month")),
                        "budget_usd": _amount(path.name, where, row.get("budget_usd"))})
        places.append(where)
    frame = pd.DataFrame(records, columns=list(BUDGET_COLUMNS), index=pd.Index(places, dtype=object))
    keys = frame.assign(who=frame["team"].fillna("centre:" + frame["cost_centre"].fillna("")))
    twice = keys[keys.duplicated(["who", "month"], keep=False)]
    if not twice.empty:
        raise DashboardError(f"{path.name}: {twice['who'].iloc[0]} has two budgets for {twice['month'].iloc[0]:%Y-%m}")
    frame.attrs["source"] = path.name
    return frame


def _toml_rows(source: str, text: str) -> list[tuple[str, object]]:
    try:
        rows = parse_toml(text).get("budget", [])
    except tomllib.TOMLDecodeError as error:  # deep nesting and over-long integers too (parse_toml)
        raise DashboardError(f"{source}: not valid TOML: {str(error).split(';')[0]}") from None
    if not isinstance(rows, list):
        raise DashboardError(f"{source}: field 'budget': must be [[budget]] tables")
    return [(f"budget[{i}]", row) for i, row in enumerate(rows)]


def _csv_rows(source: str, text: str) -> list[tuple[str, object]]:
    """The rows of a budgets CSV, each as wide as its header: a row with more fields (an
    unquoted thousands separator, ``a,,2026-11,5,000``) or fewer is refused, never read short."""
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise DashboardError(f"{source}: not valid CSV: {error}") from None
    header = [column.strip() for column in table[0]] if table else []
    missing = [c for c in ("month", "budget_usd") if c not in header]
    if missing:
        raise DashboardError(f"{source}: missing column(s) {', '.join(missing)} "
                             f"(columns: {', '.join(BUDGET_COLUMNS)})")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise DashboardError(f"{source}: column {twice[0]!r} appears twice in the header")
    numbered: list[tuple[str, object]] = []
    for number, fields in enumerate(table[1:], start=2):
        if not fields:
            continue  # a blank line
        if len(fields) != len(header):
            hint = " (an unquoted thousands separator? write 5000 or \"5,000\")" if len(fields) > len(header) else ""
            raise DashboardError(f"{source}: row {number}: {len(fields)} fields, the header has "
                                 f"{len(header)}{hint}")
        numbered.append((f"row {number}", dict(zip(header, fields, strict=True))))
    return numbered


def _name(source: str, where: str, row: dict, field: str) -> str | None:
    """A team or cost-centre name, or None when absent or blank; a name with a control or
    invisible character (``alpha`` + U+200B) is refused: it could never match a label."""
    value = row.get(field)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise DashboardError(f"{source}: {where}, field {field!r}: a name, got {reprlib.repr(value)}")
    name = value.strip()
    if name and not name.isprintable():
        raise DashboardError(f"{source}: {where}, field {field!r}: {reprlib.repr(name)} has an invisible or "
                            "control character")
    return name or None


def _month(source: str, where: str, value: object) -> date:
    found = _MONTH.fullmatch(value.strip()) if isinstance(value, str) else None
    try:
        if found is None:
            raise ValueError
        return date(int(found[1]), int(found[2]), 1)
    except ValueError:
        raise DashboardError(f"{source}: {where}, field 'month': YYYY-MM, got {reprlib.repr(value)}") from None


def _amount(source: str, where: str, value: object) -> float:
    """A budget in USD: a finite number >= 0 (a TOML number, or plain decimal text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        budget = float(value) if abs(value) < 10**300 else math.inf  # float() overflows past 1e308
    elif isinstance(value, float):
        budget = value
    elif isinstance(value, str) and _AMOUNT.fullmatch(value.strip()):
        budget = float(value.strip())
    else:
        budget = float("nan")
    if not math.isfinite(budget) or budget < 0:
        raise DashboardError(f"{source}: {where}, field 'budget_usd': a number >= 0 (plain digits, no thousands "
                             f"separator), got {reprlib.repr(value)}")
    return budget


def check_names(budgets: pd.DataFrame, teams: list[str], run_id: str, centres: CentreSpend | None = None) -> None:
    """Refuse a budget naming a team no workload of the run has, or a cost centre nothing
    carries: the pod label's values (``centres``), else the cost centres the file's team rows
    name. A typo (``alhpa``) would otherwise burn nothing, silently."""
    source = budgets.attrs.get("source", "budgets")
    known_teams = set(teams)
    for where, row in budgets[budgets["team"].notna()].iterrows():
        if row["team"] not in known_teams:
            raise DashboardError(f"{source}: {where}, field 'team': run {run_id!r} has no team {row['team']!r} "
                                 f"(teams: {_shown(sorted(known_teams))})")
    if centres is not None:
        check_cost_centres(budgets, centres, run_id)
        return
    mapped = set(budgets["cost_centre"][budgets["team"].notna()].dropna())
    for where, row in budgets[budgets["team"].isna()].iterrows():
        if row["cost_centre"] not in mapped:
            raise DashboardError(f"{source}: {where}, field 'cost_centre': no team row of the file names the cost "
                                 f"centre {row['cost_centre']!r} and no pod label carries cost centres "
                                 f"(cost centres: {_shown(sorted(mapped))})")


def _shown(names: list[str]) -> str:
    return ", ".join(names[:10]) + (", …" if len(names) > 10 else "") if names else "none"


def check_cost_centres(budgets: pd.DataFrame, centres: CentreSpend, run_id: str) -> None:
    """Refuse a cost centre's budget (a row without a team) naming a value of the label that no
    charged workload of the run carries: a typo would otherwise burn nothing, silently."""
    known = set(centres.daily["cost_centre"])
    for where, row in budgets[budgets["team"].isna()].iterrows():
        if row["cost_centre"] not in known:
            raise DashboardError(f"{budgets.attrs.get('source', 'budgets')}: {where}, field 'cost_centre': no "
                                 f"workload of run {run_id!r} carries the label {centres.label_key}="
                                 f"{row['cost_centre']!r} (values: {_shown(sorted(known))})")


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
    mapping = budgets.dropna(subset=["team", "cost_centre"]).drop_duplicates("team").set_index("team")["cost_centre"]
    # One group-by per basis, each name's days looked up per budget row (not a filter per row).
    by_team = _spend_per_day(daily, "team")
    by_centre = _spend_per_day(daily.assign(cost_centre=daily["team"].map(mapping)), "cost_centre") \
        if centres is None else _spend_per_day(centres.daily.assign(
            day=pd.to_datetime(centres.daily["day"]).dt.date), "cost_centre")
    nothing = pd.Series([], dtype=float, index=pd.Index([], dtype=object))
    rows = []
    for budget in budgets.itertuples():
        month: date = budget.month
        days_in_month = calendar.monthrange(month.year, month.month)[1]
        last = min(as_of, date(month.year, month.month, days_in_month))
        if isinstance(budget.team, str):
            scope, name, basis = "team", budget.team, "team"
            spent = by_team.get(budget.team, nothing)
        else:
            scope, name = "cost_centre", budget.cost_centre
            basis = "teams" if centres is None else f"label:{centres.label_key}"
            spent = by_centre.get(budget.cost_centre, nothing)
        per_day = spent[(spent.index >= month) & (spent.index <= last)]
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


def _spend_per_day(frame: pd.DataFrame, key: str) -> dict[str, pd.Series]:
    """``key``'s value -> its spend per day (index: the days with spend), from one group-by."""
    summed = frame.dropna(subset=[key]).groupby([key, "day"])["spend"].sum()
    return {name: days.droplevel(0) for name, days in summed.groupby(level=0)}


def z_against(baseline: pd.Series, value: float) -> float:
    """``value``'s modified z-score against ``baseline`` (earlier days): 0.6745·(x − median)/MAD,
    the mean absolute deviation × 1.2533 in place of a MAD of 0, and 0 for a value equal to a
    baseline that never varies (within 1 %; inf beyond)."""
    median = float(baseline.median())
    mad = float((baseline - median).abs().median())
    if mad > 0:
        return 0.6745 * (value - median) / mad
    mean_ad = float((baseline - median).abs().mean())
    if mean_ad > 0:
        return (value - median) / (1.2533 * mean_ad)
    return 0.0 if abs(value - median) <= 0.01 * abs(median) else math.copysign(math.inf, value - median)


def steady_days(phases: dict[str, tuple[datetime, datetime]]) -> tuple[date, date] | None:
    """The first and last whole UTC days of a run's steady phase (``data.run_phases``), or
    None when the run has no phases or no whole steady day: the days a baseline may use."""
    if "steady" not in phases:
        return None
    start, end = phases["steady"]
    first = start.date() if start.time() == time() else start.date() + timedelta(days=1)
    last = end.date() - timedelta(days=1)
    return (first, last) if first <= last else None


def anomalies(daily: pd.DataFrame, centres: CentreSpend | None = None,
              steady: tuple[date, date] | None = None) -> pd.DataFrame:
    """The team-days (scope ``team``) and, with ``centres``, the days of each value of the
    cost-centre label (scope ``cost_centre``) whose spend or idle share is anomalous for it.

    A day is judged against the days before it only (a baseline of at least
    ``MIN_BASELINE_DAYS``), never against later days; with ``steady`` (``steady_days``) only the
    whole days of the steady phase are judged or used as a baseline: the warm-up, when the
    simulated cluster fills, and the drain, when it empties, are not a team's usual spend."""
    groups = [("team", daily.rename(columns={"team": "name"}))]
    if centres is not None:
        groups.append(("cost_centre", centres.daily.rename(columns={"cost_centre": "name"})))
    found = []
    for scope, frame in groups:
        for name, days in frame.groupby("name", sort=True):
            if steady is not None:
                day = pd.to_datetime(days["day"]).dt.date
                days = days[(day >= steady[0]) & (day <= steady[1])]
            days = days.sort_values("day").assign(
                idle_share=lambda d: (d["idle_cost"] / d["spend"].where(d["spend"] > 0)).fillna(0.0))
            for i in range(MIN_BASELINE_DAYS, len(days)):
                before, row = days.iloc[:i], days.iloc[i]
                sz = z_against(before["spend"], float(row["spend"]))
                iz = z_against(before["idle_share"], float(row["idle_share"]))
                flags = [f"spend {'high' if sz > 0 else 'low'}" for _ in [0] if abs(sz) > Z_THRESHOLD]
                flags += [f"idle {'high' if iz > 0 else 'low'}" for _ in [0] if abs(iz) > Z_THRESHOLD]
                if flags:
                    found.append({"scope": scope, "name": name, "day": row["day"], "spend": round(row["spend"], 2),
                                  "idle_cost": round(row["idle_cost"], 2), "idle_share": round(row["idle_share"], 4),
                                  "spend_z": round(sz, 2), "idle_z": round(iz, 2), "flag": ", ".join(flags)})
    return pd.DataFrame(found, columns=list(ANOMALY_COLUMNS))


def teams_to_name(burned: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(over budget, trending over): the names the scheduled report lists, a cost centre as
    ``cost centre <name>``."""
    named = burned["name"].where(burned["scope"] == "team", "cost centre " + burned["name"].astype(str))
    over = named[burned["status"] == "over"].tolist()
    trending = named[burned["status"] == "trending over"].tolist()
    return over, trending
