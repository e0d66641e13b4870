"""Pure chart builder for GPU partitions through DRA: a DataFrame in, an Altair chart out (as in
dashboards/charts.py)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.charts import DEFAULT_HEIGHT, DEFAULT_WIDTH, IDLE_CAUSE_COLORS, MONEY, sized

USAGE_COLORS = {"workload": "#1565c0", "partition_fragmentation": IDLE_CAUSE_COLORS["partition_fragmentation"]}
USAGE_TITLES = {"workload": "used by workloads", "partition_fragmentation": "idle: partition fragmentation"}


def device_profile_cost_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Bars of effective cost per device profile (a MIG profile such as 1g.10gb, whole, capacity,
    mixed) and GPU model, the idle rest of split GPUs as a bar of its own in its cause's colour.
    Columns: gpu_model, device_profile, usage, gpu_share, gpu_hours, effective_cost."""
    frame = df.assign(usage_title=df["usage"].map(USAGE_TITLES).fillna(df["usage"]))
    domain = [USAGE_TITLES[u] for u in USAGE_COLORS]
    chart = (
        alt.Chart(frame, title="GPU cost per device profile (DRA)")
        .mark_bar()
        .encode(
            x=alt.X("effective_cost:Q", title="effective cost", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("device_profile:N", title=None, sort="-x"),
            yOffset=alt.YOffset("gpu_model:N"),
            color=alt.Color("usage_title:N", title=None, legend=alt.Legend(orient="top"),
                            scale=alt.Scale(domain=domain, range=list(USAGE_COLORS.values()))),
            tooltip=[alt.Tooltip("device_profile:N", title="profile"), alt.Tooltip("gpu_model:N", title="GPU model"),
                     alt.Tooltip("usage_title:N", title="usage"),
                     alt.Tooltip("gpu_share:Q", title="share of a GPU", format=".3f"),
                     alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.2f"),
                     alt.Tooltip("effective_cost:Q", title="effective cost", format=MONEY)],
        )
    )
    return sized(chart, width, height)
