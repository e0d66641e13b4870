"""Entry point of the dashboard: routing, the shared sidebar filters, the missing-db page.

Run with `gpu-finops dashboard --db P` (see dashboards/serve.py), or
`GPU_FINOPS_DB=P streamlit run dashboards/streamlit_app.py [-- --db P]`.
"""

from __future__ import annotations

import argparse
import os
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
from dashboards.text import markdown_text  # noqa: E402
from pipeline.connect import older_database_line  # noqa: E402

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
    st.error(markdown_text(message), icon=":material/error:")  # a path is text, never markup
    st.markdown(
        "Build a database first, then start the dashboard on it:\n\n"
        "```\ngpu-finops build RUN_DIR --prices prices.csv --db marts.duckdb\n"
        "gpu-finops dashboard --db marts.duckdb\n```"
    )
    st.stop()


def _sidebar_filters(db: cache.DbRef) -> data.Filters | None:
    """Run, date range, team and GPU model pickers; None when the db holds no run."""
    runs = cache.query(db, data.list_runs)
    st.sidebar.header("Filters")
    if runs.empty:
        return None
    run_ids = runs["run_id"].tolist()
    profiles = dict(zip(runs["run_id"], runs["profile"], strict=True))
    # A link such as /workload?run=R&workload=W opens on run R.
    linked = st.query_params.get("run")
    if linked in run_ids and "filters.run" not in st.session_state:
        st.session_state["filters.run"] = linked
    run_id = st.sidebar.selectbox(
        "Run", run_ids, key="filters.run",
        format_func=lambda r: f"{r} ({profiles.get(r)})" if profiles.get(r) else r,
    )
    run_range = cache.query(db, data.run_date_range, run_id)
    date_from: date | None = None
    date_to: date | None = None
    if run_range is not None:
        first, last = run_range
        # A key per run: switching runs resets the range to the new run's days.
        picked = st.sidebar.date_input(
            "Dates (UTC)", value=(first, last), min_value=first, max_value=last,
            key=f"filters.dates.{run_id}",
        )
        chosen: tuple[date, ...] = tuple(picked) if isinstance(picked, list | tuple) else (picked,)
        # While a person is picking a range, Streamlit briefly returns only its first day.
        date_from = chosen[0] if chosen else first
        date_to = chosen[1] if len(chosen) > 1 else date_from
    phase, window = None, None
    windows = cache.query(db, data.run_phases, run_id)
    if windows:  # a database built before run phases has none: the whole run
        labels = {"steady": "Steady", "all": "Whole run", "warmup": "Warm-up", "drain": "Drain"}
        picked_phase = st.sidebar.segmented_control(
            "Phase", list(labels), key=f"filters.phase.{run_id}", default=data.DEFAULT_PHASE,
            format_func=lambda phase: labels.get(phase, phase), required=True,
            help="Steady: from the end of the warm-up (the first tenth of the submission window) "
                 "to the end of the hour of the last submission. The drain after it is the "
                 "cluster emptying; the warm-up, the cluster filling. Each charge period's "
                 "phase is x_Phase in the cost records.",
        ) or data.DEFAULT_PHASE
        if picked_phase != "all":
            phase, window = picked_phase, data.phase_window(windows, picked_phase)
    tenants = st.sidebar.multiselect(
        "Team", cache.query(db, data.list_tenants, run_id), key=f"filters.teams.{run_id}",
        placeholder="All teams",
    )
    gpu_models = st.sidebar.multiselect(
        "GPU model", cache.query(db, data.list_gpu_models, run_id), key=f"filters.gpus.{run_id}",
        placeholder="All GPU models",
    )
    st.sidebar.caption(f"Database: `{_shown_path(db.path)}`")
    return data.Filters(run_id, date_from, date_to, tuple(tenants), tuple(gpu_models), phase, window)


def _shown_path(path: object) -> str:
    """The database relative to the folder `gpu-finops dashboard` was started in when it lies
    there (demo-out/gpu-finops.duckdb), else in full."""
    try:
        return str(Path(str(path)).relative_to(os.environ.get("GPU_FINOPS_LAUNCH_DIR") or Path.cwd()))
    except ValueError:
        return str(path)


# Streamlit's defaults leave a tall empty band above a 2.75rem title: on a 768-pixel-high laptop
# screen that is a fifth of the view. Tighter, so the first chart shows without scrolling.
_COMPACT_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; padding-bottom: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 1.9rem; padding-top: 0; }
[data-testid="stMainBlockContainer"] h3 { font-size: 1.25rem; }
[data-testid="stMetricValue"] { font-size: 1.7rem; }
</style>
"""


def main() -> None:
    st.set_page_config(page_title="gpu-finops", page_icon=":material/memory:", layout="wide")
    st.html(_COMPACT_CSS)
    try:
        db_path = data.require_db(_db_from_command_line() or data.db_path_from_env())
        db = cache.DbRef.of(db_path)
        if cache.query(db, data.marts_missing):  # an older build's, or a DuckDB file made elsewhere
            raise DashboardError(older_database_line(db.path))
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
    navigation = st.navigation(_pages_by_section())
    try:
        navigation.run()
    except DashboardError as exc:  # e.g. a column an older build did not write (cache.query)
        st.error(markdown_text(str(exc)), icon=":material/error:")
        st.stop()


def _pages_by_section() -> dict[str, list]:
    """The pages, grouped in the sidebar. Each has a URL path: /teams, /idle, /queues, …"""

    def page(file: str, title: str, icon: str, url_path: str, default: bool = False):
        return st.Page(_PAGES_DIR / file, title=title, icon=f":material/{icon}:",
                       url_path=None if default else url_path, default=default)

    return {
        "Cost": [
            page("overview.py", "Overview", "payments", "", default=True),
            page("teams.py", "Teams", "groups", "teams"),
            page("budgets.py", "Budgets", "account_balance_wallet", "budgets"),
            page("idle.py", "Idle GPUs", "hourglass_empty", "idle"),
            page("scenarios.py", "Scenarios", "compare_arrows", "scenarios"),
            page("advice.py", "Advice", "tips_and_updates", "advice"),
        ],
        "Scheduling": [
            page("queues.py", "Queues", "view_list", "queues"),
            page("pending.py", "Pending", "hourglass_top", "pending"),
            page("preemption.py", "Preemption", "block", "preemption"),
            page("workload.py", "Workload detail", "view_timeline", "workload"),
        ],
        "Tools": [page("sql_console.py", "SQL", "terminal", "sql")],
    }


main()
