"""Entry point of the dashboard: routing, the shared sidebar filters, the missing-db page.

Run with `gpu-finops dashboard --db P` (see dashboards/serve.py), or
`GPU_FINOPS_DB=P streamlit run dashboards/streamlit_app.py [-- --db P]`.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

# `streamlit run` puts this file's folder on sys.path, not the repository root; add the root so
# that `dashboards.*` imports absolutely whether or not the project is installed.
_REPO_ROOT = Path(__file__).resolve().parent.parent
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

import streamlit as st  # noqa: E402

from dashboards import cache, data  # noqa: E402
from dashboards.errors import DashboardError  # noqa: E402

_PAGES_DIR = Path(__file__).resolve().parent / "app_pages"


def _db_from_command_line() -> Path | None:
    """`streamlit run streamlit_app.py -- --db P` passes --db here (argv[0] is this script)."""
    if not sys.argv or Path(sys.argv[0]).name != Path(__file__).name:
        return None  # not launched by `streamlit run` (e.g. AppTest inside pytest)
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--db", type=Path)
    known, _ = parser.parse_known_args(sys.argv[1:])
    return known.db


def _show_missing_db(message: str) -> None:
    st.title("gpu-finops")
    st.error(message, icon=":material/error:")
    st.markdown(
        "Build a database first, then start the dashboard on it:\n\n"
        "```\ngpu-finops build RUN_DIR --prices prices.csv --db marts.duckdb\n"
        "gpu-finops dashboard --db marts.duckdb\n```"
    )
    st.stop()


def _sidebar_filters(db: cache.DbRef) -> data.Filters | None:
    """Run, date range, team and GPU model pickers; None when the db holds no run."""
    runs = cache.query(db, "list_runs")
    st.sidebar.header("Filters")
    if runs.empty:
        return None
    run_ids = runs["run_id"].tolist()
    profiles = dict(zip(runs["run_id"], runs["profile"], strict=True))
    run_id = st.sidebar.selectbox(
        "Run", run_ids, key="filters.run",
        format_func=lambda r: f"{r} ({profiles.get(r)})" if profiles.get(r) else r,
    )
    run_range = cache.query(db, "run_date_range", run_id)
    date_from: date | None = None
    date_to: date | None = None
    if run_range is not None:
        first, last = run_range
        # A key per run: switching runs resets the range to the new run's days.
        picked = st.sidebar.date_input(
            "Dates (UTC)", value=(first, last), min_value=first, max_value=last,
            key=f"filters.dates.{run_id}",
        )
        picked = tuple(picked) if isinstance(picked, list | tuple) else (picked,)
        # While a person is picking a range, Streamlit briefly returns only its first day.
        date_from = picked[0] if picked else first
        date_to = picked[1] if len(picked) > 1 else date_from
    tenants = st.sidebar.multiselect(
        "Team", cache.query(db, "list_tenants", run_id), key=f"filters.teams.{run_id}",
        placeholder="All teams",
    )
    gpu_models = st.sidebar.multiselect(
        "GPU model", cache.query(db, "list_gpu_models", run_id), key=f"filters.gpus.{run_id}",
        placeholder="All GPU models",
    )
    st.sidebar.caption(f"Database: `{db.path}`")
    return data.Filters(run_id, date_from, date_to, tuple(tenants), tuple(gpu_models))


def main() -> None:
    st.set_page_config(page_title="gpu-finops", page_icon=":material/memory:", layout="wide")
    try:
        db_path = data.require_db(_db_from_command_line() or data.db_path_from_env())
        db = cache.DbRef.of(db_path)
        filters = _sidebar_filters(db)
    except DashboardError as exc:
        _show_missing_db(str(exc))
        return
    if filters is None:
        st.title("gpu-finops")
        st.info("This database holds no run yet. Build one with `gpu-finops build`.")
        st.stop()
    st.session_state[cache.DB_KEY] = db
    st.session_state[cache.FILTERS_KEY] = filters
    navigation = st.navigation(
        [
            st.Page(_PAGES_DIR / "overview.py", title="Overview", icon=":material/payments:",
                    default=True),
            st.Page(_PAGES_DIR / "why_pending.py", title="Why pending",
                    icon=":material/hourglass_top:"),
        ]
    )
    navigation.run()


main()
