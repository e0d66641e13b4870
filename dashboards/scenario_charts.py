"""Pure chart builders of the Scenarios ranking (page, report): a DataFrame in, an Altair chart
out. The colours and sizes are the ones of `dashboards.charts`, so a usage class looks the same
in every chart; kept apart so that no chart module grows past what a reader can hold."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.charts import DEFAULT_WIDTH, IDLE_CAUSE_COLORS, MONEY, USAGE_CLASS_COLORS, sized
from dashboards.labels import LABEL_EXPR


def scenario_ranking_chart(breakdown: pd.DataFrame, ranking: pd.DataFrame, value: str = "effective_cost",
                           width: int | str = DEFAULT_WIDTH * 2, height: int | None = None) -> alt.TopLevelMixin:
    """Ranked scenarios, best on top: each run's cost (or GPU-hours, ``value``) stacked by usage
    class, idle split by cause; a dashed line at the baseline's total. ``breakdown``: run_id,
    usage_class, gpu_hours, effective_cost; ``ranking``: run_id, rank, is_baseline[, scenario]."""
    names = ranking.get("scenario", pd.Series(dtype=object)).fillna(ranking["run_id"]) \
        if "scenario" in ranking else ranking["run_id"]
    labels = {run: f"{rank}. {name}" + (" (baseline)" if base else "")
              for run, rank, name, base in zip(ranking["run_id"], ranking["rank"], names, ranking["is_baseline"],
                                               strict=True)}
    df = breakdown[breakdown["run_id"].isin(labels)].assign(scenario=lambda d: d["run_id"].map(labels))
    order = [labels[r] for r in ranking["run_id"]]
    classes = sorted(df["usage_class"].unique(), key=lambda c: (c.startswith("idle"), c)) if not df.empty else []
    palette = {**USAGE_CLASS_COLORS, **{f"idle: {k}": v for k, v in IDLE_CAUSE_COLORS.items()}}
    money = value == "effective_cost"
    axis_title = "effective cost (USD)" if money else "GPU-hours"
    bars = alt.Chart(df).mark_bar().encode(
        y=alt.Y("scenario:N", title=None, sort=order, axis=alt.Axis(labelLimit=320)),
        x=alt.X(f"sum({value}):Q", title=axis_title, axis=alt.Axis(format="$,.0f" if money else ",.0f")),
        color=alt.Color("usage_class:N", scale=alt.Scale(domain=classes, range=[palette.get(c, "#616161")
                                                                                  for c in classes]),
                        sort=classes, legend=alt.Legend(orient="bottom", title=None, columns=4,
                                                                labelExpr=LABEL_EXPR)),
        order=alt.Order("usage_class:N"),
        tooltip=[alt.Tooltip("scenario:N"), alt.Tooltip("usage_class:N", title="usage class"),
                 alt.Tooltip("gpu_hours:Q", title="GPU-hours", format=",.1f"),
                 alt.Tooltip("effective_cost:Q", title="effective cost", format=MONEY)],
    )
    base_runs = ranking.loc[ranking["is_baseline"], "run_id"].tolist()
    base_total = float(df.loc[df["run_id"].isin(base_runs), value].sum())
    rule = alt.Chart(pd.DataFrame({"baseline": [base_total]})).mark_rule(strokeDash=[6, 4], color="#212121").encode(
        x="baseline:Q", tooltip=[alt.Tooltip("baseline:Q", title="baseline total",
                                             format=MONEY if money else ",.1f")])
    title = "Scenarios ranked: " + ("cost" if money else "GPU-hours") + " by usage class (dashed: the baseline)"
    return alt.layer(bars, rule, title=title).properties(
        width=width, height=height or max(120, 28 * len(order) + 40))


def scenario_change_chart(ranking: pd.DataFrame, metric: str, label: str, higher_is_better: bool = False,
                          width: int | str = DEFAULT_WIDTH, height: int | None = None) -> alt.Chart:
    """Each scenario's change of ``metric`` against the baseline, green where it is better
    (lower for cost, waste and waits). ``ranking``: run_id, rank, is_baseline, ``metric``[, scenario]."""
    names = ranking["scenario"].fillna(ranking["run_id"]) if "scenario" in ranking else ranking["run_id"]
    base = float(ranking.loc[ranking["is_baseline"], metric].fillna(0).iloc[0]) if ranking["is_baseline"].any() else 0.0
    df = pd.DataFrame({"scenario": [f"{r}. {n}" for r, n in zip(ranking["rank"], names, strict=True)],
                       "change": ranking[metric].fillna(0).astype(float) - base})
    df["direction"] = ["lower" if c < 0 else ("higher" if c > 0 else "same") for c in df["change"]]
    chart = alt.Chart(df, title=f"{label}: change against the baseline").mark_bar().encode(
        y=alt.Y("scenario:N", title=None, sort=df["scenario"].tolist(), axis=alt.Axis(labelLimit=320)),
        x=alt.X("change:Q", title=f"{label} − baseline"),
        color=alt.Color("direction:N", legend=None, scale=alt.Scale(
            domain=["lower", "same", "higher"],
            range=["#c62828", "#9e9e9e", "#2e7d32"] if higher_is_better else ["#2e7d32", "#9e9e9e", "#c62828"])),
        tooltip=[alt.Tooltip("scenario:N"), alt.Tooltip("change:Q", format=",.2f")],
    )
    return sized(chart, width, height or max(120, 28 * len(df) + 40))
