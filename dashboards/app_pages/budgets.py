"""Budgets: each team's (and cost centre's) spend to date against its monthly budget, the
forecast to the end of the month with its interval, and the team-days of anomalous spend or
idle. The budgets file comes from `gpu-finops dashboard --budgets P`."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from dashboards import budgets, cache, data, finops_charts, ui
from dashboards.errors import DashboardError

db, filters = cache.current()
st.title("Budgets and burn")
path = os.environ.get(budgets.BUDGETS_ENV_VAR)
if not path:
    st.info("No budgets file: start the dashboard with `gpu-finops dashboard --db P --budgets budgets.csv` "
            "(columns team, cost_centre, month, budget_usd; docs/reports.md).", icon=":material/account_balance_wallet:")
    st.stop()
try:
    book = budgets.read_budgets(Path(path))
except DashboardError as error:
    st.error(str(error), icon=":material/error:")
    st.stop()
daily = cache.query(db, data.daily_team_spend, filters.run_id)
run_range = cache.query(db, data.run_date_range, filters.run_id)
as_of = filters.date_to or (run_range[1] if run_range else None)
if as_of is None:
    st.info("This run has no charged days.")
    st.stop()
burned = budgets.burn(daily, book, as_of)
over, trending = budgets.teams_to_name(burned)
left, right = st.columns(2)
left.metric("Over budget", ", ".join(over) or "none")
right.metric("Trending over", ", ".join(trending) or "none")
st.caption(f"Spend to {as_of} (what each team is charged, its idle share included); the forecast adds the days "
           "left at the mean daily spend so far, with a 95% interval.")
cache.chart(finops_charts.budget_burn_chart(burned))
ui.table_with_csv(burned, "budget_burn.csv", key="budgets.burn.csv")
st.subheader("Anomalous days")
flagged = budgets.anomalies(daily)
if flagged.empty:
    st.success("No team-day stands out from the team's usual spend and idle share.")
else:
    ui.table_with_csv(flagged, "budget_anomalies.csv", key="budgets.anomalies.csv")
