"""Fixtures shared across test folders."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's own database (tests/demo_database.py): built once per session, or read from
    $GPU_FINOPS_DEMO_OUT."""
    from tests.demo_database import demo_database

    return demo_database(tmp_path_factory.mktemp("demo"))
