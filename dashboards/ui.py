"""Small presentation helpers the pages share: number formats, the scope caption, a table with
its CSV download, and the column formats used for money and hours."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboards import cache, data
from dashboards.text import markdown_text as md


def compact_usd(value: float) -> str:
    """$648.3k rather than $648,347.84: several metrics share a 1366-pixel-wide row."""
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"${value / limit:,.1f}{suffix}"
    return f"${value:,.2f}"


def compact_number(value: float, unit: str = "") -> str:
    """12.3k GPU-h rather than 12,345.678 GPU-h."""
    for limit, divisor, suffix in ((1e9, 1e9, "B"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if abs(value) >= limit:
            return f"{value / divisor:,.1f}{suffix}{unit}"
    # whole numbers from 10 up (and for zero); one decimal below, where it still says something
    return f"{value:,.0f}{unit}" if abs(value) >= 10 or value == 0 else f"{value:,.1f}{unit}"


def hours(seconds: float | None) -> str:
    """A duration in seconds as hours (or minutes when short); an em dash when unknown."""
    if seconds is None or seconds != seconds:
        return "—"
    if abs(seconds) < 3600:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


def scope_caption(filters: data.Filters, extra: str = "") -> None:
    """One grey line saying what the page shows: run, dates, teams, GPU models."""
    # Run ids, teams and models are user text: escaped, so the caption's Markdown cannot
    # turn one into a link or an image fetched from elsewhere.
    teams = ", ".join(md(t) for t in filters.tenants) if filters.tenants else "all teams"
    models = ", ".join(md(m) for m in filters.gpu_models) if filters.gpu_models else "all GPU models"
    phase = f"{filters.phase} phase" if filters.phase else "whole run"
    parts = [f"Run {md(filters.run_id)}", f"{filters.date_from} to {filters.date_to} (UTC)", phase,
             teams, models]
    st.caption(" · ".join(parts) + (f" · {extra}" if extra else ""))


def money_columns(df: pd.DataFrame) -> dict[str, Any]:
    """Column formats: dollars for *cost* columns, one decimal for hours, % for shares."""
    config: dict[str, Any] = {}
    for column in df.columns:
        name = str(column)
        if not pd.api.types.is_numeric_dtype(df[column]) or pd.api.types.is_bool_dtype(df[column]):
            continue
        if "cost" in name or name.startswith("usd"):
            config[name] = st.column_config.NumberColumn(format="$%.2f")
        elif name.endswith("_pct") or name in ("share", "idle_pct"):
            config[name] = st.column_config.NumberColumn(format="percent")
        elif "hours" in name or name.endswith("_h") or name.endswith("_gpus") or name == "gpus":
            config[name] = st.column_config.NumberColumn(format="%.1f")
    return config


def table_with_csv(df: pd.DataFrame, file_name: str, key: str, **kwargs: Any) -> None:
    """A table (money and hours formatted) with its CSV download button under it."""
    column_config = {**money_columns(df), **kwargs.pop("column_config", {})}
    cache.table(df, column_config=column_config, **kwargs)
    cache.csv_download(df, file_name, key=key)


def file_safe(text: str) -> str:
    """Text as a download file name part (letters, digits, - and _ only)."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text))[:60]
