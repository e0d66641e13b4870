"""Small presentation helpers the pages share: number formats, the scope caption, a table with
its CSV download, and the column formats used for money and hours."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboards import cache, data, labels
from dashboards.text import markdown_text as md


def compact_usd(value: float) -> str:
    """$648.3k rather than $648,347.84: several metrics share a 1366-pixel-wide row."""
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"${value / limit:,.1f}{suffix}"
    return f"${value:,.2f}"


def signed_usd(delta: float) -> str:
    """A change of money for st.metric, the sign first (-$10.9k): Streamlit points the arrow
    by the text's first character, so "$-10.9k" would read as a rise."""
    return ("-" if delta < 0 else "+") + compact_usd(abs(delta))


def compact_number(value: float, unit: str = "") -> str:
    """12.3k GPU-h rather than 12,345.678 GPU-h."""
    for limit, divisor, suffix in ((1e9, 1e9, "B"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if abs(value) >= limit:
            return f"{value / divisor:,.1f}{suffix}{unit}"
    # whole numbers from 10 up (and for zero); one decimal below, where it still says something
    return f"{value:,.0f}{unit}" if abs(value) >= 10 or value == 0 else f"{value:,.1f}{unit}"


def hours(seconds: float | None) -> str:
    """A duration in seconds as a person reads it (s, min, h, days); an em dash when unknown."""
    return labels.duration(seconds)


def scope_caption(filters: data.Filters, extra: str = "") -> None:
    """One grey line saying what the page shows: run, dates, teams, GPU models."""
    # Run ids, teams and models are user text: escaped, so the caption's Markdown cannot
    # turn one into a link or an image fetched from elsewhere.
    teams = ", ".join(md(t) for t in filters.tenants) if filters.tenants else "all teams"
    models = ", ".join(md(m) for m in filters.gpu_models) if filters.gpu_models else "all GPU models"
    phase = f"{filters.phase} phase" if filters.phase else "whole run"
    parts = [f"Run {md(filters.run_id)}", f"{window_text(filters)} UTC ({phase} within the dates)",
             teams, models]
    st.caption(" · ".join(parts) + (f" · {extra}" if extra else ""))


def window_text(filters: data.Filters) -> str:
    """The exact window every figure of a page covers: the dates picked, cut to the phase."""
    params = filters.params()
    start, end = params["ts_from"], params["ts_to"]
    if start is None or end is None:
        return f"{filters.date_from or 'start'} to {filters.date_to or 'end'}"
    return f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}"


_DURATION_COLUMNS = labels.DURATION_COLUMNS


def money_columns(df: pd.DataFrame) -> dict[str, Any]:
    """Column formats and readable headers: dollars for *cost* columns, one decimal for hours,
    % for shares; every header in words with its unit (``labels.header``)."""
    config: dict[str, Any] = {}
    for column in df.columns:
        name = str(column)
        label = labels.header(name)
        numeric = pd.api.types.is_numeric_dtype(df[column]) and not pd.api.types.is_bool_dtype(df[column])
        if not numeric or name in _DURATION_COLUMNS:
            config[name] = st.column_config.Column(label)
        elif "cost" in name or name.startswith("usd"):
            config[name] = st.column_config.NumberColumn(label, format="dollar")  # $12,627.78
        elif name.endswith("_pct") or name in ("share", "idle_pct", "utilization", "coverage"):
            config[name] = st.column_config.NumberColumn(label, format="percent")
        elif "hours" in name or name.endswith("_h") or name.endswith("_gpus") or name == "gpus":
            config[name] = st.column_config.NumberColumn(label, format="%.1f")
        else:
            config[name] = st.column_config.NumberColumn(label)
    return config


def shown_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as the page shows it: the marts' vocabulary in words (``Unallocated (idle)`` for
    the platform line), durations in human units."""
    return labels.shown_frame(df)


def table_with_csv(df: pd.DataFrame, file_name: str, key: str, csv_frame: pd.DataFrame | None = None,
                   **kwargs: Any) -> None:
    """A table (readable values and headers, money and hours formatted) with its CSV download
    button under it; the CSV keeps the marts' names and raw numbers (of ``csv_frame``, when the
    table shows only some of its columns)."""
    column_config = {**money_columns(df), **kwargs.pop("column_config", {})}
    cache.table(shown_frame(df), column_config=column_config, **kwargs)
    cache.csv_download(df if csv_frame is None else csv_frame, file_name, key=key)


def reconciliation(parts: list[tuple[str, float]], whole_label: str, whole: float,
                   unit: str = "usd") -> None:
    """One grey line that adds the page's parts up to its headline, to the cent (or the tenth
    of a GPU-hour): what a reader checks first, and what the browser test checks."""
    def shown(value: float) -> str:
        return f"${value:,.2f}" if unit == "usd" else f"{value:,.1f} GPU-h"
    terms = " + ".join(f"{md(str(labels.words(name)))} {shown(value)}" for name, value in parts)
    st.caption(f"Adds up: {terms} = {md(whole_label)} {shown(whole)}")


def reconciliation_count(parts: list[tuple[str, int]], whole_label: str, whole: int) -> None:
    """``reconciliation`` for counts (workloads, pods)."""
    terms = " + ".join(f"{md(str(labels.words(name)))} {value:,}" for name, value in parts)
    st.caption(f"Adds up: {terms} = {md(whole_label)} {whole:,}")


def file_safe(text: str) -> str:
    """Text as a download file name part (letters, digits, - and _ only)."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text))[:60]
