"""Pure chart builders: a DataFrame in, an Altair chart out. No I/O, no Streamlit.

The dashboard and the batch report draw the same charts from the same functions, so a chart
looks the same wherever it is read. Colours of the usage classes are fixed here once.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

# Fixed order and colours, so "idle" is the same grey in every chart and every report.
USAGE_CLASS_ORDER = ["productive", "gang_wait", "lost_to_preemption", "idle"]
USAGE_CLASS_COLORS = {
    "productive": "#2e7d32",  # green: paid for and used
    "gang_wait": "#f9a825",  # amber: held by an incomplete gang
    "lost_to_preemption": "#c62828",  # red: work thrown away
    "idle": "#9e9e9e",  # grey: nobody holds it
}
_USAGE_SCALE = alt.Scale(
    domain=USAGE_CLASS_ORDER, range=[USAGE_CLASS_COLORS[c] for c in USAGE_CLASS_ORDER]
)

# Idle causes: reds/oranges for waste that scheduling could fix, grey for lack of demand.
IDLE_CAUSE_COLORS = {
    "fragmentation": "#e65100",
    "gang_barrier": "#ef6c00",
    "quota": "#6a1b9a",
    "no_demand": "#9e9e9e",
    "gang_wait (partial placement)": "#f9a825",
    "unknown": "#616161",
}

DEFAULT_WIDTH = 560
DEFAULT_HEIGHT = 230
_MONEY = "$,.2f"


def _sized(chart: alt.Chart, width: int | str, height: int) -> alt.Chart:
    return chart.properties(width=width, height=height)


def spend_by_team_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Horizontal bars of effective cost per team. Columns: tenant, effective_cost[, list_cost,
    gpu_hours]."""
    tooltip = [alt.Tooltip("tenant:N", title="team"),
               alt.Tooltip("effective_cost:Q", title="effective cost", format=_MONEY)]
    if "list_cost" in df.columns:
        tooltip.append(alt.Tooltip("list_cost:Q", title="list cost", format=_MONEY))
    if "gpu_hours" in df.columns:
        tooltip.append(alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f"))
    chart = (
        alt.Chart(df, title="Spend by team (effective cost)")
        .mark_bar(color="#1565c0")
        .encode(
            x=alt.X("effective_cost:Q", title="effective cost (USD)", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("tenant:N", title=None, sort="-x"),
            tooltip=tooltip,
        )
    )
    return _sized(chart, width, height)


def usage_class_over_time_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked area of GPU-hours per usage class. Columns: period_start, usage_class,
    gpu_hours."""
    chart = (
        alt.Chart(df, title="GPU-hours by usage class")
        .mark_area(interpolate="step-after", opacity=0.9)
        .encode(
            x=alt.X("period_start:T", title=None),
            y=alt.Y("sum(gpu_hours):Q", title="GPU-hours", stack="zero"),
            color=alt.Color("usage_class:N", title="usage class", scale=_USAGE_SCALE,
                            sort=USAGE_CLASS_ORDER, legend=alt.Legend(orient="top")),
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
    return _sized(chart, width, height)


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
            y=alt.Y("cause:N", title=None, sort="-x"),
            color=alt.Color("cause:N", scale=alt.Scale(domain=domain, range=palette), legend=None),
            tooltip=[alt.Tooltip("cause:N"),
                     alt.Tooltip("effective_cost:Q", title="effective cost", format=_MONEY),
                     alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f")],
        )
    )
    return _sized(chart, width, height)


def costliest_workloads_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Horizontal bars of the costliest workloads, coloured by team. Columns: workload_id,
    effective_cost, tenant[, gpu_hours, final_state]."""
    tooltip = [alt.Tooltip("workload_id:N", title="workload"), alt.Tooltip("tenant:N", title="team"),
               alt.Tooltip("effective_cost:Q", title="effective cost", format=_MONEY)]
    for column, title in (("gpu_hours", "GPU-hours"), ("final_state", "final state")):
        if column in df.columns:
            tooltip.append(alt.Tooltip(f"{column}:{'Q' if column == 'gpu_hours' else 'N'}",
                                       title=title))
    chart = (
        alt.Chart(df, title="Costliest workloads")
        .mark_bar()
        .encode(
            x=alt.X("effective_cost:Q", title="effective cost (USD)", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("workload_id:N", title=None, sort="-x"),
            color=alt.Color("tenant:N", title="team", legend=alt.Legend(orient="top")),
            tooltip=tooltip,
        )
    )
    return _sized(chart, width, height)


def workload_timeline_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = 220
) -> alt.Chart:
    """One workload's events over time: a point per event on a lane per event type, labelled
    with the reason. Columns: ts, event, reason, message[, pod_index, node]."""
    data = df.copy()
    data["reason"] = data["reason"].fillna("") if "reason" in data else ""
    data["label"] = data["reason"].where(data["reason"] != "", data["event"])
    tooltip = [alt.Tooltip("ts:T", title="time", format="%Y-%m-%d %H:%M:%S"),
               alt.Tooltip("event:N"), alt.Tooltip("reason:N")]
    for column in ("pod_index", "node", "message"):
        if column in data.columns:
            tooltip.append(alt.Tooltip(f"{column}:N"))
    base = alt.Chart(data, title="Events and reasons over time").encode(
        x=alt.X("ts:T", title=None),
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
            y=alt.Y("latest_reason:N", title=None, sort="-x"),
            tooltip=[alt.Tooltip("latest_reason:N", title="reason"), alt.Tooltip("workloads:Q"),
                     alt.Tooltip("gpus_requested:Q", title="GPUs requested", format=",.1f")],
        )
    )
    return _sized(chart, width, height)


_EVENT_ORDER = ["submitted", "pending", "admitted", "reserved", "started", "resized",
                "requeued", "timed_out", "preempted", "finished", "rejected"]
_EVENT_COLORS = ["#607d8b", "#6a1b9a", "#1565c0", "#f9a825", "#2e7d32", "#00838f",
                 "#8d6e63", "#ef6c00", "#c62828", "#1b5e20", "#212121"]


def runs_compared_chart(df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = 160) -> alt.Chart:
    """GPU-hours per run, stacked by usage class (idle split by cause): scenarios side by side."""
    if df.empty:
        return _sized(alt.Chart(pd.DataFrame({"run_id": []})).mark_bar(), width, height)
    classes = sorted(df["usage_class"].unique(), key=lambda c: (c.startswith("idle"), c))
    palette = {**USAGE_CLASS_COLORS, **{f"idle: {k}": v for k, v in IDLE_CAUSE_COLORS.items()}}
    scale = alt.Scale(domain=classes, range=[palette.get(c, "#616161") for c in classes])
    chart = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("run_id:N", title=None),
            x=alt.X("sum(gpu_hours):Q", title="GPU-hours"),
            color=alt.Color("usage_class:N", scale=scale, sort=classes, legend=alt.Legend(orient="top", title=None)),
            order=alt.Order("usage_class:N"),
            tooltip=["run_id", "usage_class", alt.Tooltip("gpu_hours:Q", format=",.1f"),
                     alt.Tooltip("effective_cost:Q", format=_MONEY)],
        )
        .properties(title="GPU-hours by usage class, per run")
    )
    return _sized(chart, width, height)
