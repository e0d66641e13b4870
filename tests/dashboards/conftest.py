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

