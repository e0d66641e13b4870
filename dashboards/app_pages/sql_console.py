"""SQL: read-only ad-hoc queries over the marts, with the saved examples of `gpu-finops sql
--query NAME`. The same guard as the command: one read statement, no writes, no file access."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboards import cache, charts, sql, ui
from dashboards.errors import DashboardError

MAX_ROWS = 5000
DEFAULT_EXAMPLE = "cost_per_team_per_week"

db, filters = cache.current()
saved = {q.name: q for q in sql.saved_queries()}

st.title("SQL")
st.caption("One read-only statement (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN) over the marts: "
           "writes, ATTACH, COPY … TO and file access are refused. Tables and their columns: "
           "docs/tables.md; questions answered in SQL: docs/sql.md. The sidebar filters do not "
           "apply here.")

example_col, _ = st.columns([3, 1])
with example_col:
    names = list(saved)
    first = names.index(DEFAULT_EXAMPLE) if DEFAULT_EXAMPLE in names else 0
    example = st.selectbox("Saved example", names, index=first, key="sql.example",
                           format_func=lambda n: f"{saved[n].title}  ({n})")
# Picking another example replaces the editor's text (the editor is keyed per example).
query = st.text_area("Query", value=saved[example].sql if example else "", height=220,
                     key=f"sql.query.{example}")
if example and saved[example].question:
    st.caption(saved[example].question.replace("_", "\\_"))  # __idle__ is not bold

try:
    # On a cursor of the dashboard's one connection: a second connection would pin the old
    # file's DuckDB instance across a rebuild (see cache.cursor).
    result, cut = sql.query_frame(Path(db.path), query, max_rows=MAX_ROWS,
                                  connect=lambda: cache.cursor(db))
except DashboardError as exc:
    st.warning(str(exc), icon=":material/block:")
    st.stop()

if cut:  # the fetch stopped at its share of the memory bound (or MAX_ROWS): said, never silent
    st.info(f"The first {len(result):,} rows only: {sql.kept_words(MAX_ROWS)}. For every row: "
            "`gpu-finops sql --format csv`.", icon=":material/content_cut:")
chart = charts.auto_chart(result)
if chart is not None:
    cache.chart(chart)
else:
    st.caption("No chart: it needs a label or time column and a number column.")
st.caption(f"{len(result):,} row(s)" + (" shown, the first" if cut else ""))
ui.table_with_csv(result, f"{example or 'query'}.csv", key="sql.result.csv")
