"""Shared fixtures for the dashboard tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# The project may not be installed in the venv; make `import dashboards` work either way.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_db import build_fixture_db  # noqa: E402


@pytest.fixture(scope="session")
def fixture_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small mart database (see fixture_db.py); shared, never written after creation."""
    return build_fixture_db(tmp_path_factory.mktemp("marts") / "marts.duckdb")




@pytest.fixture(scope="session")
def demo_pages(demo_db, tmp_path_factory) -> tuple[str, dict[tuple[int, str], dict]]:
    """One browser pass over every page of the demo's dashboard at each width (demo_browser.py),
    shared by the reconciliation tests (test_dashboards_demo_pages, at 1366 px) and the layout
    test (both widths): each page is loaded once per width in the session."""
    from demo_browser import browse_demo_pages

    return browse_demo_pages(demo_db, tmp_path_factory.mktemp("demo-pages"))
