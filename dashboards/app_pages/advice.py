"""Advice: the quota study of `gpu-finops advise quotas` (its Pareto front, every trial) and,
per team, the recommended point beside today's manifests."""

from __future__ import annotations

import streamlit as st

from dashboards import advice_charts, cache, data, ui

db, filters = cache.current()
trials = cache.query(db, data.advice_trials)

st.title("Advice: Kueue quotas")
if trials.empty:
    st.info("This database holds no quota advice. Run `gpu-finops advise quotas --trace T --cluster C "
            "--queues Q --out DIR`, then `gpu-finops dashboard --db DIR/gpu-finops.duckdb` (docs/advice.md).",
            icon=":material/tips_and_updates:")
    st.stop()

done = trials[trials["idle_cost"].notna()]
chosen = done[done["recommended"].eq(True)]
today = done[done["trial"] == "today"]
if not chosen.empty and not today.empty:
    c, t = chosen.iloc[0], today.iloc[0]
    left, middle, right = st.columns(3)
    left.metric("Recommended trial", str(c["trial"]))
    middle.metric("Idle cost (steady window)", ui.compact_usd(c["idle_cost"]),
                  delta=ui.signed_usd(c["idle_cost"] - t["idle_cost"]), delta_color="inverse")
    right.metric("Cost of delay", ui.compact_usd(c["cost_of_delay"]),
                 delta=ui.signed_usd(c["cost_of_delay"] - t["cost_of_delay"]), delta_color="inverse")
    st.markdown(advice_charts.seed_verdict(c))
st.caption("Each trial is the trace replayed under other quotas, once per replay seed: its figures are the means "
           "over the seeds, with the half-width of their 95 % interval (the *_ci95 columns). The Pareto front: trials that meet every "
           "target and that no other such trial beats on both idle cost and cost of delay; the recommendation "
           "is the one of least idle cost plus cost of delay, a change only when it beats today beyond the noise. Apply recommended.yaml with kubectl after "
           "checking it (docs/advice.md).")
cache.chart(advice_charts.pareto_chart(done))

teams = cache.query(db, data.advice_teams)
if not teams.empty:
    st.subheader("Per team: today and recommended")
    labels = dict(data.TEAM_METRICS)
    metric = st.selectbox("Figure", list(labels), key="advice.metric", format_func=lambda m: labels[m])
    cache.chart(advice_charts.team_comparison_chart(teams, metric, labels[metric]))
    ui.table_with_csv(teams, "advice_teams.csv", key="advice.teams.csv")

st.subheader("Every trial")
ui.table_with_csv(trials, "advice_trials.csv", key="advice.trials.csv")
