"""Budgets: each team's and cost centre's spend to date against its monthly budget, the
forecast to the end of the month with its interval, and the days of anomalous spend or idle.
The budgets file comes from `gpu-finops dashboard --budgets P`; a cost centre's spend is what
the workloads carrying its value of the pod label (`--cost-centre-label`, default cost-center,
else cost_center) are charged, else its teams summed."""

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
    key = cache.query(db, data.cost_centre_label, filters.run_id,
                      os.environ.get(budgets.COST_CENTRE_LABEL_ENV_VAR) or None)
    centres = None if key is None else budgets.CentreSpend(key, cache.query(db, data.daily_label_spend,
                                                                            filters.run_id, key))
    budgets.check_names(book, cache.query(db, data.list_tenants, filters.run_id), filters.run_id, centres)
except DashboardError as error:
    st.error(str(error), icon=":material/error:")
    st.stop()
daily = cache.query(db, data.daily_team_spend, filters.run_id)
run_range = cache.query(db, data.run_date_range, filters.run_id)
as_of = filters.date_to or (run_range[1] if run_range else None)
if as_of is None:
    st.info("This run has no charged days.")
    st.stop()
burned = budgets.burn(daily, book, as_of, centres, run_range)
over, trending = budgets.teams_to_name(burned)
left, right = st.columns(2)
left.metric("Over budget", ", ".join(over) or "none")
right.metric("Trending over", ", ".join(trending) or "none")
st.caption(f"Spend to {as_of} (what each team is charged, its idle share included); the forecast adds the days "
           "left at the mean daily spend over the days with cost records, with a 95% prediction interval "
           "(t quantile, the mean estimated: docs/reports.md). A budget is a month's: every day of the run in that "
           "month counts, whatever the sidebar's phase; anomalous days are judged within the steady phase.")
teams, centre_rows = burned[burned["scope"] == "team"], burned[burned["scope"] == "cost_centre"]
if not teams.empty:
    st.subheader("Teams")
    cache.chart(finops_charts.budget_burn_chart(teams))
if not centre_rows.empty:
    st.subheader("Cost centres")
    st.caption(f"A cost centre's spend: what the workloads whose pod label {key} carries its name are charged, "
               "whatever their team." if key else
               "A cost centre's spend: its teams' (the budgets file's team rows name their cost centre); no "
               "workload carries a cost-center or cost_center label.")
    cache.chart(finops_charts.budget_burn_chart(centre_rows))
ui.table_with_csv(burned, "budget_burn.csv", key="budgets.burn.csv")
st.subheader("Anomalous days")
flagged = budgets.anomalies(daily, centres, budgets.steady_days(cache.query(db, data.run_phases, filters.run_id)))
if flagged.empty:
    st.success("No day stands out from the team's (or cost centre's) usual spend and idle share.")
else:
    ui.table_with_csv(flagged, "budget_anomalies.csv", key="budgets.anomalies.csv")
