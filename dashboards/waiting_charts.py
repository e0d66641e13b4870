"""Chart builders of the waiting and queueing pages: queue usage against quota, a workload's
place in its queue, preemptions, a workload's pods over time. Pure functions (a DataFrame in,
an Altair chart out), sharing `charts.py`'s sizes and colours.
"""

from __future__ import annotations

from datetime import datetime

import altair as alt
import pandas as pd

from dashboards.charts import (
    DEFAULT_HEIGHT,
    DEFAULT_WIDTH,
    MONEY,
    USAGE_CLASS_COLORS,
    USAGE_CLASS_ORDER,
    closed_steps,
    sized,
    team_scale,
    time_axis,
    with_period_end,
)
from dashboards.labels import LABEL_EXPR


def queue_usage_chart(
    df: pd.DataFrame, title: str, width: int | str = DEFAULT_WIDTH, height: int = 200
) -> alt.Chart:
    """One ClusterQueue over time: admitted GPUs (area), the part borrowed (orange), nominal
    quota (solid line) and the borrowing ceiling (dashed). Columns: period_start,
    admitted_gpus, borrowed_gpus, nominal_quota, borrowing_ceiling."""
    base = alt.Chart(closed_steps(df, "period_start")).encode(x=alt.X("period_start:T", title=None))
    tooltip = [alt.Tooltip("period_start:T", title="period", format="%Y-%m-%d %H:%M"),
               alt.Tooltip("admitted_gpus:Q", title="admitted GPUs", format=",.1f"),
               alt.Tooltip("borrowed_gpus:Q", title="borrowed GPUs", format=",.1f"),
               alt.Tooltip("nominal_quota:Q", title="nominal quota", format=",.0f"),
               alt.Tooltip("borrowing_ceiling:Q", title="nominal + borrowing limit",
                           format=",.0f")]
    admitted = base.mark_area(interpolate="step-after", color="#1565c0", opacity=0.55).encode(
        y=alt.Y("admitted_gpus:Q", title="GPUs"), tooltip=tooltip)
    borrowed = base.mark_area(interpolate="step-after", color="#ef6c00", opacity=0.8).encode(
        y="borrowed_gpus:Q", tooltip=tooltip)
    nominal = base.mark_line(interpolate="step-after", color="#212121", strokeWidth=1.5).encode(
        y="nominal_quota:Q")
    ceiling = base.mark_line(interpolate="step-after", color="#212121", strokeDash=[4, 3],
                             strokeWidth=1).encode(y="borrowing_ceiling:Q")
    return (admitted + borrowed + nominal + ceiling).properties(
        title=title, width=width, height=height)


def queue_position_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = 170,
    domain: tuple | None = None,
) -> alt.Chart:
    """The workload's position in its queue (1 = head) at each attempt, and the queue's length.
    Columns: ts, position, queued."""
    long = df.melt(id_vars=["ts"], value_vars=["position", "queued"], var_name="series",
                   value_name="workloads")
    long["series"] = long["series"].map({"position": "its position (1 = next)",
                                         "queued": "workloads queued"})
    chart = (
        alt.Chart(long, title="Position in its queue over time")
        .mark_line(interpolate="step-after",
                   point=alt.OverlayMarkDef(size=18) if len(df) <= 60 else False)
        .encode(
            x=time_axis("ts", domain),
            y=alt.Y("workloads:Q", title="workloads", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("series:N", title=None, legend=alt.Legend(orient="top"),
                            scale=alt.Scale(range=["#6a1b9a", "#bdbdbd"])),
            tooltip=[alt.Tooltip("ts:T", title="time", format="%Y-%m-%d %H:%M:%S"),
                     alt.Tooltip("series:N", title=" "), alt.Tooltip("workloads:Q")],
        )
    )
    return sized(chart, width, height)


def preemption_over_time_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
    window: tuple[datetime, datetime] | None = None,
) -> alt.Chart:
    """Stacked bars of the cost of work lost to preemption per team and period. Columns:
    period_start, tenant, lost_cost, lost_gpu_hours. ``window``: the x axis spans the page's
    window (its other charts' span), not only the periods that lost work."""
    domain = alt.Scale(domain=[window[0].isoformat(), window[1].isoformat()]) if window else alt.Undefined
    chart = (
        alt.Chart(with_period_end(df), title="Cost of work lost to preemption")
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("period_start:T", title=None, scale=domain),
            x2="period_end:T",
            y=alt.Y("sum(lost_cost):Q", title="USD", axis=alt.Axis(format="$,.0f")),
            color=alt.Color("tenant:N", title="team", legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR),
                            scale=team_scale(df["tenant"].dropna().unique().tolist())),
            tooltip=[alt.Tooltip("period_start:T", title="period"),
                     alt.Tooltip("tenant:N", title="team"),
                     alt.Tooltip("sum(lost_gpu_hours):Q", title="GPU-hours", format=",.1f"),
                     alt.Tooltip("sum(lost_cost):Q", title="cost", format=MONEY)],
        )
    )
    return sized(chart, width, height)


def preemption_victims_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
    top: int = 12,
) -> alt.Chart:
    """The victims that lost the most, coloured by team. Columns: workload_id, tenant,
    lost_cost, lost_gpu_hours, evicted_pods."""
    shown = df.nlargest(top, ["lost_cost", "evicted_pods"]) if len(df) > top else df
    chart = (
        alt.Chart(shown, title=f"Victims that lost the most (top {min(top, len(df))})")
        .mark_bar()
        .encode(
            x=alt.X("lost_cost:Q", title="lost cost (USD)", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("workload_id:N", title=None, sort="-x", axis=alt.Axis(labelLimit=190)),
            color=alt.Color("tenant:N", title="team", legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR),
                            scale=team_scale(df["tenant"].dropna().unique().tolist())),
            tooltip=[alt.Tooltip("workload_id:N", title="workload"),
                     alt.Tooltip("tenant:N", title="team"),
                     alt.Tooltip("evicted_pods:Q", title="evicted pods"),
                     alt.Tooltip("lost_gpu_hours:Q", title="lost GPU-hours", format=",.1f"),
                     alt.Tooltip("lost_cost:Q", title="lost cost", format=MONEY)],
        )
    )
    return sized(chart, width, max(height, 20 * len(shown)))




def workload_gantt_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int | None = None,
    domain: tuple | None = None,
) -> alt.Chart:
    """A Gantt of a workload's pods: one lane per pod, a bar per holding interval labelled with
    its node, coloured by usage class. Columns: pod_index, node, start_ts, end_ts, usage_class,
    gpus."""
    data = df.copy()
    data["pod"] = "pod " + data["pod_index"].astype("Int64").astype(str)
    lanes = data["pod"].nunique()
    height = height or max(80, min(24 * lanes, 600))
    order = sorted(data["pod"].unique(), key=lambda p: int(p.split()[-1]) if p[4:].isdigit() else 0)
    classes = [c for c in USAGE_CLASS_ORDER if c != "idle"]  # a pod's GPUs are never idle
    base = alt.Chart(data).encode(
        x=time_axis("start_ts", domain),
        y=alt.Y("pod:N", title=None, sort=order),
        tooltip=[alt.Tooltip("pod:N"), alt.Tooltip("node:N"), alt.Tooltip("gpus:Q", title="GPUs"),
                 alt.Tooltip("usage_class:N", title="usage class"),
                 alt.Tooltip("start_ts:T", title="from", format="%Y-%m-%d %H:%M:%S"),
                 alt.Tooltip("end_ts:T", title="to", format="%Y-%m-%d %H:%M:%S")],
    )
    bars = base.mark_bar(height=max(6, min(18, 600 // max(lanes, 1) - 4))).encode(
        x2="end_ts:T",
        color=alt.Color("usage_class:N", title="usage class", legend=alt.Legend(orient="top", labelExpr=LABEL_EXPR),
                        scale=alt.Scale(domain=classes,
                                        range=[USAGE_CLASS_COLORS[c] for c in classes])),
    )
    nodes = base.mark_text(align="left", dx=4, color="white", fontSize=10).encode(text="node:N")
    return (bars + nodes).properties(title="Its pods on nodes over time", width=width,
                                     height=height)


def cluster_queue_holdings_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked area of the mean GPUs each ClusterQueue's workloads held. Columns: period_start,
    cluster_queue, held_gpus."""
    chart = (
        alt.Chart(closed_steps(df, "period_start"), title="GPUs held per ClusterQueue")
        .mark_area(interpolate="step-after", opacity=0.85)
        .encode(
            x=alt.X("period_start:T", title=None),
            y=alt.Y("sum(held_gpus):Q", title="GPUs (mean per period)", stack="zero"),
            color=alt.Color("cluster_queue:N", title="ClusterQueue",
                            legend=alt.Legend(orient="top")),
            tooltip=[alt.Tooltip("period_start:T", title="period"),
                     alt.Tooltip("cluster_queue:N", title="ClusterQueue"),
                     alt.Tooltip("sum(held_gpus):Q", title="GPUs", format=",.1f")],
        )
    )
    return sized(chart, width, height)
