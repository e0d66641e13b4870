"""Pure chart builders for the FinOps figures (unservable demand, idle by how it is paid,
commitment pools, cost of waiting, checkpoint loss per eviction, cost per training run): a
DataFrame in, an Altair chart out, as in dashboards/charts.py, whose colours they share."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.charts import (
    DEFAULT_HEIGHT,
    DEFAULT_WIDTH,
    IDLE_TEAM_COLOR,
    others_note,
    sized,
    team_scale,
    top_and_other,
)
from dashboards.labels import LABEL_EXPR

MONEY = "$,.2f"
PAYMENT_COLORS = {"avoidable": "#ef6c00", "sunk": "#5d4037"}
EVICTION_COLORS = {"reclaim": "#c62828", "preemption": "#ef6c00", "time-out": "#f9a825"}
OUTCOME_COLORS = {"finished": "#2e7d32", "failed": "#c62828", "unfinished": "#9e9e9e"}


def _scale(colors: dict[str, str]) -> alt.Scale:
    return alt.Scale(domain=list(colors), range=list(colors.values()))


def unservable_demand_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Bars of the GPU-hours asked by demand that can never run, per team, coloured by reason.
    Columns: tenant, reason, workloads, asked_gpu_hours."""
    chart = (
        alt.Chart(df, title="Unservable demand (GPU-hours asked)")
        .mark_bar()
        .encode(
            x=alt.X("sum(asked_gpu_hours):Q", title="GPU-hours asked"),
            y=alt.Y("tenant:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            color=alt.Color("reason:N", title="why it can never run", legend=alt.Legend(orient="top")),
            tooltip=[alt.Tooltip("tenant:N", title="team"), alt.Tooltip("reason:N"),
                     alt.Tooltip("sum(workloads):Q", title="workloads"),
                     alt.Tooltip("sum(asked_gpu_hours):Q", title="GPU-hours asked", format=",.1f")],
        )
    )
    return sized(chart, width, height)


def idle_by_payment_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked bars of idle GPU cost per cause, split into avoidable (paid by the hour) and
    sunk (committed). Columns: kind, cause, effective_cost, gpu_hours."""
    chart = (
        alt.Chart(df, title="Idle cost: avoidable or sunk")
        .mark_bar()
        .encode(
            x=alt.X("sum(effective_cost):Q", title="USD", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("cause:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            color=alt.Color("kind:N", title=None, scale=_scale(PAYMENT_COLORS),
                            legend=alt.Legend(orient="top")),
            tooltip=[alt.Tooltip("cause:N"), alt.Tooltip("kind:N"),
                     alt.Tooltip("sum(effective_cost):Q", title="cost", format=MONEY),
                     alt.Tooltip("sum(gpu_hours):Q", title="GPU-hours", format=",.1f")],
        )
    )
    return sized(chart, width, height)


def commitment_pools_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Per commitment pool: committed hours used and unused, and the on-demand hours the unused
    part could have carried. Columns: sku_id, used_quantity, unused_quantity,
    coverable_on_demand_quantity."""
    parts = {"used_quantity": "used", "unused_quantity": "unused",
             "coverable_on_demand_quantity": "on-demand it could have carried"}
    long = df.melt(id_vars=["sku_id"], value_vars=list(parts), var_name="part", value_name="hours")
    long["part"] = long["part"].map(parts)
    chart = (
        alt.Chart(long, title="Commitment pools")
        .mark_bar()
        .encode(
            x=alt.X("sum(hours):Q", title="hours"),
            y=alt.Y("part:N", title=None, sort=list(parts.values()), axis=alt.Axis(labelLimit=0)),
            row=alt.Row("sku_id:N", title=None),
            color=alt.Color("part:N", title=None, legend=None,
                            scale=alt.Scale(domain=list(parts.values()),
                                            range=["#2e7d32", IDLE_TEAM_COLOR, "#ef6c00"])),
            tooltip=[alt.Tooltip("sku_id:N", title="SKU"), alt.Tooltip("part:N"),
                     alt.Tooltip("sum(hours):Q", title="hours", format=",.1f")],
        )
    )
    return chart.properties(width=width, height=max(40, height // max(1, df["sku_id"].nunique() or 1)))


def waiting_cost_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Bars of the GPU-hours demanded while pending per team, valued at list price (demand, not
    spend). Columns: tenant, pending_demand_list_value, pending_demand_gpu_hours, workloads."""
    df, others = top_and_other(df, "tenant", ["pending_demand_list_value"])
    teams = df["tenant"].dropna().unique().tolist() if "tenant" in df else []
    chart = (
        alt.Chart(df, title=others_note("GPU-hours demanded while pending, at list price", others))
        .mark_bar()
        .encode(
            x=alt.X("pending_demand_list_value:Q", title="list value of the demand (not spend)",
                    axis=alt.Axis(format="$,.0f")),
            y=alt.Y("tenant:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            color=alt.Color("tenant:N", legend=None, scale=team_scale(teams)),
            tooltip=[alt.Tooltip("tenant:N", title="team"),
                     alt.Tooltip("pending_demand_list_value:Q", title="list value (not spend)",
                                 format=MONEY),
                     alt.Tooltip("pending_demand_gpu_hours:Q", title="GPU-hours demanded while pending",
                                 format=",.1f"),
                     alt.Tooltip("workloads:Q", title="workloads that waited")],
        )
    )
    return sized(chart, width, height)


def eviction_losses_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Stacked bars of the work evictions threw away per victim team, by cause (reclaim by
    another queue, preemption, time-out). Columns: tenant, cause, lost_cost, evictions,
    lost_cost_per_eviction."""
    chart = (
        alt.Chart(df, title="Checkpoint loss per team")
        .mark_bar()
        .encode(
            x=alt.X("sum(lost_cost):Q", title="USD", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("tenant:N", title=None, sort="-x", axis=alt.Axis(labelExpr=LABEL_EXPR)),
            color=alt.Color("cause:N", title=None, scale=_scale(EVICTION_COLORS),
                            legend=alt.Legend(orient="top")),
            tooltip=[alt.Tooltip("tenant:N", title="team"), alt.Tooltip("cause:N"),
                     alt.Tooltip("sum(evictions):Q", title="evictions"),
                     alt.Tooltip("sum(lost_cost):Q", title="lost cost", format=MONEY),
                     alt.Tooltip("mean(lost_cost_per_eviction):Q", title="per eviction",
                                 format=MONEY)],
        )
    )
    return sized(chart, width, height)


def training_run_costs_chart(
    df: pd.DataFrame, width: int | str = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT
) -> alt.Chart:
    """Bars of the mean cost of a training run in the window per outcome, the idle it carries
    included. Columns: outcome, runs, cost_per_run (usage_cost_per_run, idle_share_per_run in
    the tooltip when present)."""
    parts = [alt.Tooltip(f"{c}:Q", title=c.replace("_", " "), format=MONEY)
             for c in ("usage_cost_per_run", "idle_share_per_run") if c in df.columns]
    chart = (
        alt.Chart(df, title="Cost per training run in the window, with the idle it carries")
        .mark_bar()
        .encode(
            x=alt.X("cost_per_run:Q", title="USD per run", axis=alt.Axis(format="$,.0f")),
            y=alt.Y("outcome:N", title=None, sort=list(OUTCOME_COLORS)),
            color=alt.Color("outcome:N", legend=None, scale=_scale(OUTCOME_COLORS)),
            tooltip=[alt.Tooltip("outcome:N"), alt.Tooltip("runs:Q", title="runs"),
                     alt.Tooltip("cost_per_run:Q", title="cost per run", format=MONEY), *parts],
        )
    )
    return sized(chart, width, height)


BURN_CHART_ROWS = 40  # budgets a burn chart draws: beyond, those whose forecast is furthest over
STATUS_COLORS = {"within": "#2e7d32", "trending over": "#ef6c00", "over": "#c62828"}


def budget_burn_chart(burned: pd.DataFrame, width: int = DEFAULT_WIDTH) -> alt.TopLevelMixin:
    """Per budget (team or cost centre, month): spend to date as a bar coloured by status, the
    forecast's 95% interval as a rule with the forecast a tick, the budget a black tick.
    ``burned``: `dashboards.budgets.burn`."""
    title = "Spend to date, forecast (interval) and budget (black)"
    if len(burned) > BURN_CHART_ROWS:  # the budgets furthest over their budget, in the file's order
        over = (burned["forecast"] / burned["budget_usd"].where(burned["budget_usd"] > 0)).fillna(float("inf"))
        title += f": the {BURN_CHART_ROWS} of {len(burned):,} budgets furthest over (the table has each)"
        burned = burned.loc[over.sort_values(ascending=False, kind="stable").index[:BURN_CHART_ROWS]].sort_index()
    # A chart of one scope (the Budgets page draws teams and cost centres apart) needs no tag.
    mixed = burned["scope"].nunique() > 1
    centre = burned["scope"].eq("cost_centre").map({True: " (cost centre)" if mixed else "", False: ""})
    df = burned.assign(label=burned["name"].astype(str) + centre + " " + burned["month"].astype(str))
    y = alt.Y("label:N", title=None, sort=None, axis=alt.Axis(labelLimit=260))
    tooltip = [alt.Tooltip("label:N", title="budget"), alt.Tooltip("status:N"),
               alt.Tooltip("spend_to_date:Q", title="spend to date", format=MONEY),
               alt.Tooltip("forecast:Q", format=MONEY), alt.Tooltip("budget_usd:Q", title="budget", format=MONEY)]
    base = alt.Chart(df)
    bars = base.mark_bar(opacity=0.8).encode(
        y=y, x=alt.X("spend_to_date:Q", title="USD", axis=alt.Axis(format="$,.0f")),
        color=alt.Color("status:N", scale=_scale(STATUS_COLORS), legend=alt.Legend(orient="bottom", title=None)),
        tooltip=tooltip)
    interval = base.mark_rule(color="#424242").encode(y=y, x="forecast_low:Q", x2="forecast_high:Q", tooltip=tooltip)
    forecast = base.mark_tick(color="#424242", thickness=2).encode(y=y, x="forecast:Q", tooltip=tooltip)
    budget = base.mark_tick(color="#000000", thickness=3, size=22).encode(y=y, x="budget_usd:Q", tooltip=tooltip)
    return alt.layer(bars, interval, forecast, budget, title=title) \
        .properties(width=width, height=max(80, 30 * len(df)))
