"""Pure chart builders: a DataFrame in, an Altair chart out. No I/O, no Streamlit.

The dashboard and the batch report draw the same charts from the same functions, so a chart
looks the same wherever it is read. Colours of the usage classes are fixed here once.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.labels import LABEL_EXPR, PLATFORM_LINE
from pipeline.registry import IDLE_CAUSES, USAGE_CLASS_NAMES

# Fixed order and colours, so "idle" is the same grey in every chart and every report.
USAGE_CLASS_ORDER = list(USAGE_CLASS_NAMES)  # the one registry (pipeline/registry.py)
USAGE_CLASS_COLORS = {
    "productive": "#2e7d32",  # green: paid for and used
    "gang_wait": "#f9a825",  # amber: held by an incomplete gang
    "lost_to_preemption": "#c62828",  # red: work thrown away
    "idle": "#9e9e9e",  # grey: nobody holds it
}
_USAGE_SCALE = alt.Scale(
    domain=USAGE_CLASS_ORDER, range=[USAGE_CLASS_COLORS[c] for c in USAGE_CLASS_ORDER]
)

# Idle causes: each cause's colour is the registry's (pipeline/registry.py), in its order of
# precedence: reds/oranges for waste that scheduling could fix, greys for lack of capacity or
# demand.
IDLE_CAUSE_COLORS = {cause.name: cause.colour for cause in IDLE_CAUSES} | {
    "gang_wait (partial placement)": "#f9a825",
    "unknown": "#616161",
}

DEFAULT_WIDTH = 560
# One panel of a faceted chart: fits the main column of the dashboard at 1366 px wide.
FACET_PANEL_WIDTH = 760
TIMELINE_MIN_WIDTH = 800  # px: the events chart's width at 1366 px, where its labels must not overlap
DEFAULT_HEIGHT = 230
MONEY = "$,.2f"


def sized(chart: alt.Chart, width: int | str, height: int) -> alt.Chart:
    return chart.properties(width=width, height=height)


CHART_BARS = 30
"""The most bars a bar chart of names draws: beyond, the largest and one bar of the others
summed (6,000 values of a pod label would be 6,000 unreadable bars and past altair's row cap)."""


def top_and_other(df: pd.DataFrame, name: str, values: list[str], limit: int = CHART_BARS) -> tuple[pd.DataFrame, int]:
    """(``df`` with at most ``limit`` rows, how many rows were summed): beyond ``limit``, the
    ``limit`` − 1 rows of the largest absolute total of ``values`` and one row named
    ``other (N)`` with the rest's numeric columns summed (the other columns left empty)."""
    if len(df) <= limit:
        return df, 0
    size = df[values].abs().sum(axis=1)
    order = size.sort_values(ascending=False, kind="stable").index
    kept, rest = df.loc[order[:limit - 1]], df.loc[order[limit - 1:]]
    numbers = [c for c in df.columns if c != name and pd.api.types.is_numeric_dtype(df[c])
               and not pd.api.types.is_bool_dtype(df[c])]
    other = pd.DataFrame([{name: f"other ({len(rest):,})", **rest[numbers].sum().to_dict()}])
    return pd.concat([kept, other], ignore_index=True), len(rest)


def others_note(title: str, others: int) -> str:
    """``title`` with the note of a chart that summed ``others`` rows into one bar."""
    return f"{title}: the {CHART_BARS - 1} largest, {others:,} others summed (the table has each)" if others else title


def spend_by_team_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Horizontal bars of effective cost per team. Columns: tenant, effective_cost[, list_cost,
    gpu_hours]."""
    tooltip = [alt.Tooltip("tenant:N", title="team"),
               alt.Tooltip("effective_cost:Q", title="effective cost", format=MONEY)]
    if "list_cost" in df.columns:
        tooltip.append(alt.Tooltip("list_cost:Q", title="list cost", format=MONEY))
    if "gpu_hours" in df.columns:
        tooltip.append(alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f"))
    df, others = top_and_other(df, "tenant", ["effective_cost"])
    chart = (
        alt.Chart(df, title=others_note("Spend by team (effective cost)", others))
        .mark_bar()
        .encode(
            x=alt.X("effective_cost:Q", title="effective cost (USD)", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("tenant:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            # the same colour per team on every page; the axis already names them
            color=alt.Color("tenant:N", legend=None,
                            scale=team_scale(df["tenant"].dropna().unique().tolist()
                                              if "tenant" in df else [])),
            tooltip=tooltip,
        )
    )
    return sized(chart, width, height)


def usage_class_over_time_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked area of GPU-hours per usage class. Columns: period_start, usage_class,
    gpu_hours."""
    chart = (
        alt.Chart(closed_steps(df, "period_start"), title="GPU-hours by usage class")
        .mark_area(interpolate="step-after", opacity=0.9)
        .encode(
            x=alt.X("period_start:T", title=None),
            y=alt.Y("sum(gpu_hours):Q", title="GPU-hours", stack="zero"),
            color=alt.Color("usage_class:N", title="usage class", scale=_USAGE_SCALE,
                            sort=USAGE_CLASS_ORDER, legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR)),
            # Stack productive at the bottom, idle on top, whatever order the rows come in.
            order=alt.Order("stack_order:Q"),
            tooltip=[alt.Tooltip("period_start:T", title="period"),
                     alt.Tooltip("usage_class:N", title="usage class"),
                     alt.Tooltip("sum(gpu_hours):Q", title="GPU-hours", format=",.1f")],
        )
        .transform_calculate(
            stack_order=f"indexof({USAGE_CLASS_ORDER!r}, datum.usage_class)"
        )
    )
    return sized(chart, width, height)


def idle_cost_by_cause_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Bars of the cost of idle GPUs per cause, plus GPUs held by partially placed gangs.
    Columns: cause, effective_cost, gpu_hours."""
    causes = list(IDLE_CAUSE_COLORS)
    extra = [c for c in df.get("cause", pd.Series(dtype=str)).unique() if c not in causes]
    domain = causes + extra
    palette = [IDLE_CAUSE_COLORS.get(c, "#455a64") for c in domain]
    chart = (
        alt.Chart(df, title="Idle and partial-placement cost by cause")
        .mark_bar()
        .encode(
            x=alt.X("effective_cost:Q", title="effective cost (USD)", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("cause:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            color=alt.Color("cause:N", scale=alt.Scale(domain=domain, range=palette), legend=None),
            tooltip=[alt.Tooltip("cause:N"),
                     alt.Tooltip("effective_cost:Q", title="effective cost", format=MONEY),
                     alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f")],
        )
    )
    return sized(chart, width, height)


def costliest_workloads_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Horizontal bars of the costliest workloads, coloured by team. Columns: workload_id,
    effective_cost, tenant[, gpu_hours, final_state]."""
    tooltip = [alt.Tooltip("workload_id:N", title="workload"), alt.Tooltip("tenant:N", title="team"),
               alt.Tooltip("effective_cost:Q", title="effective cost", format=MONEY)]
    for column, title in (("gpu_hours", "GPU-hours"), ("final_state", "final state")):
        if column in df.columns:
            tooltip.append(alt.Tooltip(f"{column}:{'Q' if column == 'gpu_hours' else 'N'}",
                                       title=title))
    teams = df["tenant"].dropna().unique().tolist() if "tenant" in df else []
    chart = (
        alt.Chart(df, title="Costliest workloads")
        .mark_bar()
        .encode(
            x=alt.X("effective_cost:Q", title="effective cost (USD)", axis=alt.Axis(format="$,.0f")),
            # every bar named: labels never thinned out for overlap (a row is tall enough for one)
            y=alt.Y("workload_id:N", title=None, sort="-x", axis=alt.Axis(labelLimit=220, labelOverlap=False)),
            color=alt.Color("tenant:N", title="team", legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR),
                            scale=team_scale(teams)),
            tooltip=tooltip,
        )
    )
    # every bar keeps its label: at least 18 pixels a workload
    return sized(chart, width, max(height, 20 * len(df)))


def workload_timeline_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = 220,
    domain: tuple | None = None,
) -> alt.Chart:
    """One workload's events over time: a point per event on a lane per event type, labelled
    with the reason. Columns: ts, event, reason, message[, pod_index, node]."""
    data = df.copy()
    data["reason"] = data["reason"].fillna("") if "reason" in data else ""
    data["label"] = data["reason"].where(data["reason"] != "", data["event"])
    # A gang can fail hundreds of attempts for one reason: label a lane only where its label
    # changes, or the text piles up into a smear.
    previous = data.groupby("event", sort=False)["label"].shift()
    data["label"] = data["label"].where(data["label"] != previous, "")
    # A label is drawn only where the one before it on its lane has ended: a label of n
    # characters spans about 6·n + 14 px of a chart at least TIMELINE_MIN_WIDTH px wide, i.e.
    # that share of the span (a fixed share let long reasons run into each other).
    if "ts" in data and len(data) > 1:
        times = pd.to_datetime(data["ts"])
        span = times.max() - times.min()
        free_from: dict[object, pd.Timestamp] = {}
        keep = []
        for event, label, when in zip(data["event"], data["label"], times, strict=True):
            shown = bool(label) and (event not in free_from or when >= free_from[event])
            if shown:
                free_from[event] = when + span * (6 * len(str(label)) + 14) / TIMELINE_MIN_WIDTH
            keep.append(shown)
        data["label"] = data["label"].where(keep, "")
    tooltip = [alt.Tooltip("ts:T", title="time", format="%Y-%m-%d %H:%M:%S"),
               alt.Tooltip("event:N"), alt.Tooltip("reason:N")]
    for column in ("pod_index", "node", "message"):
        if column in data.columns:
            tooltip.append(alt.Tooltip(f"{column}:N"))
    base = alt.Chart(data, title="Events and reasons over time").encode(
        x=time_axis("ts", domain),
        y=alt.Y("event:N", title=None, sort=_EVENT_ORDER),
        tooltip=tooltip,
    )
    points = base.mark_point(filled=True, size=90).encode(
        color=alt.Color("event:N", legend=None, scale=alt.Scale(domain=_EVENT_ORDER,
                                                                range=_EVENT_COLORS)),
        shape=alt.Shape("event:N", legend=None),
    )
    labels = base.mark_text(align="left", dx=7, dy=-7, fontSize=10).encode(text="label:N")
    return (points + labels).properties(width=width, height=height)


def pending_by_reason_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Bars of waiting workloads per latest reason. Columns: latest_reason, workloads,
    gpus_requested."""
    chart = (
        alt.Chart(df, title="Waiting workloads by latest reason")
        .mark_bar(color="#6a1b9a")
        .encode(
            x=alt.X("workloads:Q", title="workloads", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("latest_reason:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            tooltip=[alt.Tooltip("latest_reason:N", title="reason"), alt.Tooltip("workloads:Q"),
                     alt.Tooltip("gpus_requested:Q", title="GPUs requested", format=",.1f")],
        )
    )
    return sized(chart, width, height)


_EVENT_ORDER = ["submitted", "pending", "admitted", "reserved", "started", "resized",
                "requeued", "timed_out", "preempted", "finished", "rejected"]
_EVENT_COLORS = ["#607d8b", "#6a1b9a", "#1565c0", "#f9a825", "#2e7d32", "#00838f",
                 "#8d6e63", "#ef6c00", "#c62828", "#1b5e20", "#212121"]


def runs_compared_chart(df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = 160) -> alt.Chart:
    """GPU-hours per run, stacked by usage class (idle split by cause): scenarios side by side."""
    if df.empty:
        return sized(alt.Chart(pd.DataFrame({"run_id": []})).mark_bar(), width, height)
    classes = sorted(df["usage_class"].unique(), key=lambda c: (c.startswith("idle"), c))
    palette = {**USAGE_CLASS_COLORS, **{f"idle: {k}": v for k, v in IDLE_CAUSE_COLORS.items()}}
    scale = alt.Scale(domain=classes, range=[palette.get(c, "#616161") for c in classes])
    chart = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("run_id:N", title=None),
            x=alt.X("sum(gpu_hours):Q", title="GPU-hours"),
            color=alt.Color("usage_class:N", scale=scale, sort=classes,
                            legend=alt.Legend(orient="right", title=None, labelExpr=LABEL_EXPR)),
            order=alt.Order("usage_class:N"),
            tooltip=["run_id", "usage_class", alt.Tooltip("gpu_hours:Q", format=",.1f"),
                     alt.Tooltip("effective_cost:Q", format=MONEY)],
        )
        .properties(title="GPU-hours by usage class, per run")
    )
    return sized(chart, width, height)


# --------------------------------------------------------------------------------------------
# Teams, idle GPUs, queues, preemption, scenarios, workload detail, SQL
# --------------------------------------------------------------------------------------------

IDLE_TEAM_COLOR = "#9e9e9e"  # the platform line (idle) is grey wherever it appears


def team_scale(teams: list[str]) -> alt.Scale:
    """Category colours per team, with ``__idle__`` always grey."""
    palette = ["#1565c0", "#00897b", "#6a1b9a", "#ef6c00", "#ad1457", "#5d4037", "#3949ab",
               "#7cb342", "#00acc1", "#8e24aa"]
    idle = [t for t in ("__idle__", PLATFORM_LINE) if t in teams]
    named = sorted(t for t in teams if t not in idle)
    colours = [palette[i % len(palette)] for i in range(len(named))]
    return alt.Scale(domain=named + idle, range=colours + [IDLE_TEAM_COLOR] * len(idle))


def team_chargeback_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
    title: str = "Charged cost per team",
) -> alt.Chart:
    """Stacked bars per team: the cost of its own GPU-hours, its share of idle capacity and,
    with the reclaim option, the lost work moved to or from it. Columns: tenant, usage_cost,
    idle_share_cost[, reclaim_adjustment_cost]."""
    parts = {"usage_cost": "GPU-hours used", "idle_share_cost": "share of idle GPUs",
             "reclaim_adjustment_cost": "reclaimed lost work"}
    present = [c for c in parts if c in df.columns
               and (c != "reclaim_adjustment_cost" or bool((df[c].abs() > 0).any()))]
    df, others = top_and_other(df, "tenant", present)
    title = others_note(title, others)
    long = df.melt(id_vars=["tenant"], value_vars=present, var_name="part", value_name="cost")
    long["part"] = long["part"].map(parts)
    chart = (
        alt.Chart(long, title=title)
        .mark_bar()
        .encode(
            x=alt.X("sum(cost):Q", title="USD", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("tenant:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            color=alt.Color("part:N", title=None, legend=alt.Legend(orient="top", columns=2),
                            scale=alt.Scale(domain=list(parts.values()),
                                            range=["#1565c0", IDLE_TEAM_COLOR, "#c62828"])),
            tooltip=[alt.Tooltip("tenant:N", title="team"), alt.Tooltip("part:N"),
                     alt.Tooltip("sum(cost):Q", title="cost", format=MONEY)],
        )
    )
    return sized(chart, width, height)


def team_cost_over_time_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked bars of charged cost per team per period. Columns: period_start, tenant,
    charged_cost."""
    chart = (
        alt.Chart(with_period_end(df), title="Charged cost per team over time")
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("period_start:T", title=None),
            x2="period_end:T",
            y=alt.Y("sum(charged_cost):Q", title="USD", axis=alt.Axis(format="$,.0f")),
            color=alt.Color("tenant:N", title="team", legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR, columns=3),
                            scale=team_scale(df["tenant"].dropna().unique().tolist())),
            tooltip=[alt.Tooltip("period_start:T", title="period"),
                     alt.Tooltip("tenant:N", title="team"),
                     alt.Tooltip("sum(charged_cost):Q", title="cost", format=MONEY)],
        )
    )
    return sized(chart, width, height)


def _cause_scale(causes: list[str]) -> alt.Scale:
    known = [c for c in IDLE_CAUSE_COLORS if c in causes]
    extra = [c for c in causes if c not in IDLE_CAUSE_COLORS]
    domain = known + extra
    return alt.Scale(domain=domain, range=[IDLE_CAUSE_COLORS.get(c, "#455a64") for c in domain])


def idle_by_cause_over_time_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked area of idle GPU-hours per cause (and partial placement) over time.
    Columns: period_start, cause, gpu_hours."""
    causes = df["cause"].dropna().unique().tolist() if "cause" in df else []
    chart = (
        alt.Chart(closed_steps(df, "period_start"), title="Idle and partially placed GPU-hours by cause")
        .mark_area(interpolate="step-after", opacity=0.9)
        .encode(
            x=alt.X("period_start:T", title=None),
            y=alt.Y("sum(gpu_hours):Q", title="GPU-hours", stack="zero"),
            color=alt.Color("cause:N", title="cause", scale=_cause_scale(causes),
                            legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR)),
            tooltip=[alt.Tooltip("period_start:T", title="period"), alt.Tooltip("cause:N"),
                     alt.Tooltip("sum(gpu_hours):Q", title="GPU-hours", format=",.1f")],
        )
    )
    return sized(chart, width, height)


def idle_heatmap_chart(
    df: pd.DataFrame, level: str = "rack", width: int | str = DEFAULT_WIDTH * 2,
    height: int | None = None,
) -> alt.Chart:
    """Heatmap of the idle share per rack (or node) and period. Columns: place, period_start,
    idle_pct, idle_gpu_hours, capacity_gpu_hours."""
    places = df["place"].nunique() if "place" in df else 0
    height = height or max(120, min(20 * places, 800))
    chart = (
        alt.Chart(with_period_end(df), title=f"Idle share per {level} and period")
        .mark_rect()
        .encode(
            x=alt.X("period_start:T", title=None),
            x2="period_end:T",
            y=alt.Y("place:N", title=None, sort=None, axis=alt.Axis(labelLimit=160)),
            color=alt.Color("idle_pct:Q", title="idle", scale=alt.Scale(scheme="orangered",
                                                                         domain=[0, 1]),
                            legend=alt.Legend(format=".0%", orient="right")),
            tooltip=[alt.Tooltip("place:N", title=level),
                     alt.Tooltip("period_start:T", title="period", format="%Y-%m-%d %H:%M"),
                     alt.Tooltip("idle_pct:Q", title="idle", format=".1%"),
                     alt.Tooltip("idle_gpu_hours:Q", title="idle GPU-hours", format=",.1f"),
                     alt.Tooltip("capacity_gpu_hours:Q", title="capacity GPU-hours",
                                 format=",.1f")],
        )
    )
    return sized(chart, width, height)


def _period_length(starts: pd.Series) -> pd.Timedelta:
    """The bucket length of a column of period starts: the smallest gap between two of them."""
    distinct = pd.Series(sorted(pd.to_datetime(starts).dropna().unique()))
    gaps = distinct.diff().dropna()
    gaps = gaps[gaps > pd.Timedelta(0)]
    return gaps.min() if not gaps.empty else pd.Timedelta(hours=1)


def closed_steps(df: pd.DataFrame, x: str) -> pd.DataFrame:
    """The rows of a step-after chart with its last step closed: a step-after area draws each
    period from its start to the next row's start, so the last period (and a one-period
    chart's only one) would end where it begins. The last period's rows are repeated at its
    end, so the drawn area reaches the end of the window the rows cover."""
    if df.empty or x not in df:
        return df
    starts = pd.to_datetime(df[x])
    last = starts.max()
    closing = df[starts == last].copy()
    closing[x] = last + _period_length(starts)
    return pd.concat([df, closing], ignore_index=True)


def with_period_end(df: pd.DataFrame) -> pd.DataFrame:
    data = df.copy()
    data["period_end"] = data["period_start"] + _period_length(data["period_start"])
    return data


def fragmentation_by_model_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = 180
) -> alt.Chart:
    """Bars of fragmentation GPU-hours per GPU model. Columns: gpu_model,
    fragmentation_gpu_hours, fragmentation_cost, fragmentation_pct."""
    chart = (
        alt.Chart(df, title="Fragmentation per GPU model")
        .mark_bar(color=IDLE_CAUSE_COLORS["fragmentation"])
        .encode(
            x=alt.X("fragmentation_gpu_hours:Q", title="GPU-hours free but unusable"),
            y=alt.Y("gpu_model:N", title=None, sort="-x"),
            tooltip=[alt.Tooltip("gpu_model:N", title="GPU model"),
                     alt.Tooltip("fragmentation_gpu_hours:Q", title="GPU-hours", format=",.1f"),
                     alt.Tooltip("fragmentation_cost:Q", title="cost", format=MONEY),
                     alt.Tooltip("fragmentation_pct:Q", title="of capacity", format=".1%")],
        )
    )
    return sized(chart, width, height)


def scenario_by_team_chart(
    df: pd.DataFrame, value: str = "effective_cost", title: str = "Cost per team",
    width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
) -> alt.Chart:
    """Grouped bars: one bar per run within each team. Columns: run_id, tenant, ``value``."""
    money = value.endswith("cost")
    chart = (
        alt.Chart(df, title=title)
        .mark_bar()
        .encode(
            y=alt.Y("tenant:N", title=None, axis=alt.Axis(labelExpr=LABEL_EXPR)),
            yOffset=alt.YOffset("run_id:N"),
            x=alt.X(f"{value}:Q", title="USD" if money else value.replace("_", " "),
                    axis=alt.Axis(format="$,.0f" if money else ",.1f")),
            color=alt.Color("run_id:N", title="run", legend=alt.Legend(orient="top"),
                            scale=alt.Scale(range=["#1565c0", "#ef6c00"])),
            tooltip=[alt.Tooltip("run_id:N", title="run"), alt.Tooltip("tenant:N", title="team"),
                     alt.Tooltip(f"{value}:Q", format=MONEY if money else ",.2f")],
        )
    )
    return sized(chart, width, height)


RUN_COLUMNS = ("run_id", "x_RunId", "run")


def auto_chart(df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = 240,
               max_rows: int = 5000) -> alt.Chart | alt.FacetChart | None:
    """A chart for an ad-hoc query result, or None when it has no label and number columns.

    Label: the first date or time column (a line over time), else the first text column that
    varies (bars). Value: the first numeric column named like a cost, else the first numeric
    one. Series (colour): the other text column with the most distinct values, up to 12. A
    result of several runs (a run id column) gets one panel per run: two replays of one
    cluster are alternatives, and adding them up would double the cluster.
    """
    if df.empty or len(df.columns) < 2 or len(df) > max_rows:
        return None
    def is_number(c: str) -> bool:
        return pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])

    temporal = [c for c in df.columns if pd.api.types.is_datetime64_any_dtype(df[c])]
    texts = [c for c in df.columns if c not in temporal and not is_number(c)
             and not pd.api.types.is_bool_dtype(df[c])]
    varying = [c for c in texts if df[c].nunique(dropna=True) > 1]
    run = next((c for c in RUN_COLUMNS if c in varying and df[c].nunique() <= 12), None)
    varying = [c for c in varying if c != run]
    texts = [c for c in texts if c != run]
    label = temporal[0] if temporal else (varying or texts or [None])[0]
    numbers = [c for c in df.columns if c != label and is_number(c)]
    if label is None or not numbers:
        return None
    value = next((c for c in numbers if "cost" in str(c).lower()), numbers[0])
    candidates = [c for c in varying if c != label and df[c].nunique() <= 12]
    series = max(candidates, key=lambda c: df[c].nunique()) if candidates else None
    data = df[[label, value, *([series] if series else []), *([run] if run else [])]].copy()
    data.columns = ["label", "value", *(["series"] if series else []), *(["run"] if run else [])]
    color = (alt.Color("series:N", title=str(series), legend=alt.Legend(orient="top"))
             if series else alt.value("#1565c0"))
    tooltip = [alt.Tooltip("label", title=str(label)),
               alt.Tooltip("sum(value):Q", title=str(value), format=",.2f")]
    if series:
        tooltip.append(alt.Tooltip("series:N", title=str(series)))
    if label in temporal:
        chart = alt.Chart(data).mark_line(point=len(data) < 60).encode(
            x=alt.X("label:T", title=str(label)), y=alt.Y("sum(value):Q", title=str(value)),
            color=color, tooltip=tooltip)
    else:
        data["label"] = data["label"].astype(str)
        chart = alt.Chart(data).mark_bar().encode(
            y=alt.Y("label:N", title=str(label), sort="-x"),
            x=alt.X("sum(value):Q", title=str(value)), color=color, tooltip=tooltip)
        height = max(height, min(18 * data["label"].nunique(), 600))
    if run is None:
        return chart.properties(title=f"{value} by {label}", width=width, height=height)
    panel_height = max(120, height // data["run"].nunique())
    # A facet's panels need a width in pixels: Vega-Lite sizes "container" only for a single
    # or layered view, and a faceted chart fitted to its container is drawn zero pixels wide.
    panel_width = min(width, FACET_PANEL_WIDTH) if isinstance(width, int) else FACET_PANEL_WIDTH
    return chart.properties(width=panel_width, height=panel_height).facet(
        row=alt.Row("run:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left",
                                                            labelAnchor="start", labelOrient="top")),
    ).properties(title=f"{value} by {label}, one panel per run ({run})")

def time_axis(field: str, domain: tuple | None) -> alt.X:
    """A time axis, over ``domain`` (start, end) when given: charts drawn one above the other
    then line up."""
    scale = alt.Scale(domain=[pd.Timestamp(d).isoformat() for d in domain]) if domain else alt.Undefined
    # Dates on every tick (a wait spans days), thinned rather than overlapping.
    # labelFlush: the first and last labels sit inside the axis, not half past its ends;
    # labelBound: a label near an end that would still stick out is left out.
    return alt.X(f"{field}:T", title="UTC", scale=scale,
                 axis=alt.Axis(format="%b %d %H:%M", labelOverlap=True, labelAngle=0, labelFlush=True,
                               labelBound=True))
