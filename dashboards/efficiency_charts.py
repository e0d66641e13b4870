"""Pure chart builder for GPU efficiency: a DataFrame in, an Altair chart out (as in
dashboards/charts.py)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.charts import DEFAULT_HEIGHT, DEFAULT_WIDTH, sized

PART_COLORS = {"active": "#2e7d32", "allocated idle": "#ef6c00", "unmeasured": "#bdbdbd"}
_PARTS = {"active_gpu_hours": "active", "allocated_idle_gpu_hours": "allocated idle",
          "unmeasured_gpu_hours": "unmeasured"}


def gpu_efficiency_chart(
    df: pd.DataFrame, by: str = "tenant", width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked bars of productive GPU-hours per ``by`` (tenant or kind): active, allocated idle
    and unmeasured; the tooltip gives the efficiency of the measured hours. Columns: ``by``,
    active_gpu_hours, allocated_idle_gpu_hours, unmeasured_gpu_hours, allocated_idle_cost."""
    grouped = df.groupby(by, as_index=False)[[*_PARTS, "allocated_idle_cost"]].sum()
    measured = grouped["active_gpu_hours"] + grouped["allocated_idle_gpu_hours"]
    grouped["efficiency"] = (grouped["active_gpu_hours"] / measured).where(measured > 0)
    long = grouped.melt(id_vars=[by, "efficiency", "allocated_idle_cost"], value_vars=list(_PARTS),
                        var_name="part", value_name="gpu_hours")
    long["part"] = long["part"].map(_PARTS)
    label = "team" if by == "tenant" else by
    chart = (
        alt.Chart(long, title=f"GPU efficiency per {label} (productive GPU-hours)")
        .mark_bar()
        .encode(
            x=alt.X("gpu_hours:Q", title="GPU-hours", stack="zero"),
            y=alt.Y(f"{by}:N", title=None, sort="-x"),
            color=alt.Color("part:N", title=None, legend=alt.Legend(orient="top"),
                            scale=alt.Scale(domain=list(PART_COLORS), range=list(PART_COLORS.values()))),
            order=alt.Order("part:N", sort="ascending"),
            tooltip=[alt.Tooltip(f"{by}:N", title=label), alt.Tooltip("part:N"),
                     alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f"),
                     alt.Tooltip("efficiency:Q", title="efficiency (measured)", format=".1%"),
                     alt.Tooltip("allocated_idle_cost:Q", title="allocated-idle cost", format="$,.2f")],
        )
    )
    return sized(chart, width, height)
