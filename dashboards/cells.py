"""One way to write a number, for every table a person reads (the report's HTML and Markdown)
and every CSV file: what a column holds follows from its name, as the dashboard's column
formats read it (`ui.money_columns`).

- money (``*cost*``, ``usd*``, ``*_usd``, a budget's spend, forecast and budget): ``$1,234.56``;
- shares and rates held as fractions (``*_pct``, ``*share``, ``*_rate``, ``utilization``,
  ``coverage``): ``43.3%``;
- hours and GPUs (``*hours*``, ``*_h``, ``*gpus``): ``1,234.5``;
- a count (a column of whole numbers that is none of these, ``preemptions``): ``1,049``;
- any other number: ``1,234.56``. Missing values are empty, never ``None`` or ``nan``.

A CSV keeps raw numbers, rounded to their unit's precision (money and hours to 1e-4, shares
to 1e-6): the last digits of a sum of doubles depend on the order it added them, and two runs
of one report must write the same file."""

from __future__ import annotations

from typing import Any

import pandas as pd

KINDS = ("money", "share", "hours", "count", "number")
_CSV_DECIMALS = {"money": 4, "hours": 4, "share": 6, "number": 6}
_MONEY = frozenset({"spend", "spend_to_date", "forecast", "forecast_low", "forecast_high", "budget", "budget_usd"})


def kind_of(column: str, values: pd.Series) -> str:
    """What a numeric column holds (one of KINDS), from its name and, for counts, its values."""
    name = str(column).lower()
    if "cost" in name or name in _MONEY or name.startswith("usd") or name.endswith("_usd"):
        return "money"
    if name.endswith(("_pct", "share", "_rate")) or name in ("utilization", "coverage", "idle_pct"):
        return "share"
    if "hours" in name or name.endswith(("_h", "gpus")) or name == "gpus":
        return "hours"
    numbers = values.dropna()
    if pd.api.types.is_integer_dtype(values) or (
            len(numbers) > 0 and pd.api.types.is_float_dtype(values) and bool((numbers == numbers.round()).all())):
        return "count"
    return "number"


def text(value: Any, kind: str) -> str:
    """``value`` written as a person reads a number of ``kind``."""
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
        return ""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    if kind == "money":
        return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"
    if kind == "share":
        return f"{value:.1%}"
    if kind == "hours":
        return f"{value:,.1f}"
    if kind == "count":
        return f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def written(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every numeric column written as text (``text``), and missing values of the
    other columns empty."""
    columns = {}
    for column in df.columns:
        values = df[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            kind = kind_of(str(column), values)
            columns[column] = [text(v, kind) for v in values.tolist()]
        elif values.dtype == object or pd.api.types.is_string_dtype(values):
            columns[column] = ["" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v
                               for v in values.tolist()]
    return df.assign(**columns) if columns else df


def csv_rounded(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with float columns rounded to their kind's precision (counts to whole numbers)."""
    rounded = {}
    for column in df.columns:
        values = df[column]
        if pd.api.types.is_float_dtype(values):
            kind = kind_of(str(column), values)
            rounded[column] = values.round(0 if kind == "count" else _CSV_DECIMALS[kind])
            if kind == "count" and not values.isna().any():
                rounded[column] = rounded[column].astype("int64")
    return df.assign(**rounded) if rounded else df
