"""Pure chart builders of the advice (``advise quotas``): a DataFrame in, an Altair chart out,
for the dashboard's Advice page, the report section and the PNG/HTML the command writes."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboards.charts import DEFAULT_WIDTH, MONEY

STATUS_ORDER = ["today", "recommended", "Pareto front", "feasible", "misses a target"]
STATUS_COLORS = ["#212121", "#c62828", "#1565c0", "#90caf9", "#bdbdbd"]


def trial_status(trials: pd.DataFrame) -> pd.Series:
    """Each row's label: today, recommended, Pareto front, feasible or misses a target."""
    status = pd.Series("misses a target", index=trials.index)
    status[trials["feasible"].eq(True)] = "feasible"  # eq: a NULL (today's row) is not feasible
    status[trials["pareto"].eq(True)] = "Pareto front"
    status[trials["recommended"].eq(True)] = "recommended"
    if "trial" in trials:
        status[trials["trial"].astype(str) == "today"] = "today"
    return status


def seed_verdict(chosen: pd.Series) -> str:
    """The recommended trial against today over the replay seeds, one sentence: a change only
    when its improvement is beyond the noise (docs/advice.md). ``chosen``: its advice_trials row."""
    seeds = chosen.get("seeds")
    if seeds is None or pd.isna(seeds) or pd.isna(chosen.get("improvement")):
        return "Figures of one replay each: the noise over replay seeds was not measured."
    gain, ci95 = float(chosen["improvement"]), chosen.get("improvement_ci95")
    spread = "one seed: the noise is not measured" if pd.isna(ci95) else f"± ${float(ci95):,.2f}, 95 % over {int(seeds)} seeds"
    if bool(chosen.get("beats_today")):
        return f"**Recommended**: it beats today's manifests by ${gain:,.2f} ({spread}) of idle cost + cost of delay."
    return (f"**No change recommended**: its improvement over today's manifests, ${gain:,.2f} ({spread}), is within "
            "the noise of the replay seeds. Keep today's manifests.")


def pareto_chart(trials: pd.DataFrame, width: int = DEFAULT_WIDTH, height: int = 320) -> alt.TopLevelMixin:
    """Every finished trial by idle cost (x) and cost of delay (y), the Pareto front joined by a
    line, the recommended point and today's manifests marked. ``trials``: trial, idle_cost,
    cost_of_delay, total, feasible, pareto, recommended."""
    df = trials.assign(status=trial_status(trials))
    encode = {
        "x": alt.X("idle_cost:Q", title="idle cost, steady window (USD)", axis=alt.Axis(format="$,.0f")),
        "y": alt.Y("cost_of_delay:Q", title="cost of delay (USD)", axis=alt.Axis(format="$,.0f")),
    }
    points = alt.Chart(df).mark_point(filled=True, opacity=0.9).encode(
        **encode,
        color=alt.Color("status:N", scale=alt.Scale(domain=STATUS_ORDER, range=STATUS_COLORS),
                        legend=alt.Legend(orient="bottom", title=None)),
        shape=alt.condition(alt.datum.status == "today", alt.value("diamond"), alt.value("circle")),
        size=alt.condition(alt.datum.status == "recommended", alt.value(220), alt.value(70)),
        tooltip=[alt.Tooltip("trial:N"), alt.Tooltip("status:N"),
                 alt.Tooltip("idle_cost:Q", title="idle cost", format=MONEY),
                 alt.Tooltip("cost_of_delay:Q", title="cost of delay", format=MONEY),
                 alt.Tooltip("total:Q", title="idle + delay", format=MONEY)],
    )
    front = alt.Chart(df[df["pareto"].eq(True)].sort_values("idle_cost")).mark_line(
        color="#1565c0", strokeDash=[4, 3]).encode(**encode, order="idle_cost:Q")
    return alt.layer(front, points, title="Quota trials: idle cost against cost of delay").properties(
        width=width, height=height)


def team_comparison_chart(teams: pd.DataFrame, metric: str, label: str, width: int = DEFAULT_WIDTH) -> alt.TopLevelMixin:
    """One metric per team, today beside the recommended point. ``teams``: team, setting
    (today / recommended), and the metric column."""
    return alt.Chart(teams).mark_bar().encode(
        y=alt.Y("team:N", title=None),
        yOffset=alt.YOffset("setting:N", sort=["today", "recommended"]),
        x=alt.X(f"{metric}:Q", title=label),
        color=alt.Color("setting:N", scale=alt.Scale(domain=["today", "recommended"], range=["#9e9e9e", "#c62828"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        tooltip=[alt.Tooltip("team:N"), alt.Tooltip("setting:N"), alt.Tooltip(f"{metric}:Q", title=label, format=",.2f")],
    ).properties(width=width, title=f"{label} per team: today and recommended")
