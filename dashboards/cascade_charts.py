"""Pure chart builders for preemption cascades (dashboards/data/cascades.py): a DataFrame in,
an Altair chart out, sharing charts.py's sizes."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.charts import CHART_BARS, DEFAULT_HEIGHT, DEFAULT_WIDTH, MONEY, sized


def priority_pairs_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.TopLevelMixin:
    """Who preempts whom: a heatmap of GPU-hours lost per preemptor priority (rows) × victim
    priority (columns), each cell labelled with its preempted pods. Columns: preemptor_priority,
    victim_priority, preempted_pods, preempted_in_cascade, lost_gpu_hours, lost_cost."""
    levels = sorted({*df["preemptor_priority"].dropna(), *df["victim_priority"].dropna()}, reverse=True)
    base = alt.Chart(df).encode(
        x=alt.X("victim_priority:O", title="victim priority", sort=levels, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("preemptor_priority:O", title="preemptor priority", sort=levels),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("lost_gpu_hours:Q", title="lost GPU-hours", scale=alt.Scale(scheme="orangered")),
        tooltip=[alt.Tooltip("preemptor_priority:O", title="preemptor priority"),
                 alt.Tooltip("victim_priority:O", title="victim priority"),
                 alt.Tooltip("preempted_pods:Q", title="preempted pods", format=","),
                 alt.Tooltip("preempted_in_cascade:Q", title="of them in a cascade", format=","),
                 alt.Tooltip("lost_gpu_hours:Q", title="lost GPU-hours", format=",.1f"),
                 alt.Tooltip("lost_cost:Q", title="lost cost", format=MONEY)],
    )
    labels = base.mark_text(baseline="middle").encode(text=alt.Text("preempted_pods:Q", format=","))
    return alt.layer(cells, labels, title="Who preempts whom (priority pairs)").properties(
        width=width, height=height)


def depth_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """How deep the cascades go: pods preempted per depth (1 = by a preemptor not recovering
    from a preemption of its own). Columns: depth, preempted_pods, chains, lost_gpu_hours,
    lost_cost."""
    chart = (
        alt.Chart(df, title="Preempted pods per cascade depth")
        .mark_bar(color="#e65100")
        .encode(
            x=alt.X("depth:O", title="depth (1 = direct)", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("preempted_pods:Q", title="preempted pods"),
            tooltip=[alt.Tooltip("depth:O"),
                     alt.Tooltip("preempted_pods:Q", title="preempted pods", format=","),
                     alt.Tooltip("chains:Q", title="chains reaching it", format=","),
                     alt.Tooltip("lost_gpu_hours:Q", title="lost GPU-hours", format=",.1f"),
                     alt.Tooltip("lost_cost:Q", title="lost cost", format=MONEY)],
        )
    )
    return sized(chart, width, height)


def chains_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH * 2, height: int = DEFAULT_HEIGHT,
    top: int = CHART_BARS,
) -> alt.Chart:
    """GPU-hours lost per chain, the ``top`` costliest, each named by its origin preemptor and
    coloured by its depth. Columns: chain_id, origin, origin_priority, preempted_pods,
    preempted_in_cascade, depth, lost_gpu_hours, lost_cost."""
    shown = df.nlargest(top, ["lost_gpu_hours", "preempted_pods"]) if len(df) > top else df
    shown = shown.assign(chain=[f"#{c} {o}" for c, o in zip(shown["chain_id"], shown["origin"], strict=True)])
    title = (f"GPU-hours lost per chain (the {top} costliest of {len(df):,})" if len(df) > top
             else "GPU-hours lost per chain")
    chart = (
        alt.Chart(shown, title=title)
        .mark_bar()
        .encode(
            x=alt.X("lost_gpu_hours:Q", title="lost GPU-hours"),
            y=alt.Y("chain:N", title=None, sort="-x", axis=alt.Axis(labelLimit=260)),
            color=alt.Color("depth:Q", title="depth", scale=alt.Scale(scheme="oranges"),
                            legend=alt.Legend(orient="top")),
            tooltip=[alt.Tooltip("chain_id:Q", title="chain"),
                     alt.Tooltip("origin:N", title="origin preemptor"),
                     alt.Tooltip("origin_priority:Q", title="its priority"),
                     alt.Tooltip("preempted_pods:Q", title="preempted pods", format=","),
                     alt.Tooltip("preempted_in_cascade:Q", title="of them in the cascade", format=","),
                     alt.Tooltip("depth:Q", title="deepest level"),
                     alt.Tooltip("lost_gpu_hours:Q", title="lost GPU-hours", format=",.1f"),
                     alt.Tooltip("lost_cost:Q", title="lost cost", format=MONEY)],
        )
    )
    return sized(chart, width, max(height, 18 * len(shown)))
