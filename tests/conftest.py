"""Fixtures shared across test folders, and the build the suite runs.

The suite's own process imports the scheduler's pure Python tree (`scheduler/compiled.py`):
the broken-on-purpose tests patch classes and functions that compiled code would not let
them patch. Commands the tests start as processes run the compiled build where it is
current; where it is not (a source edited since `make install`), they run the pure tree
too, without a warning on every command. `tests/test_compiled_build.py` checks that the
compiled build is current where a C compiler is found, and that both builds replay alike.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scheduler import compiled

compiled.use_sources()
if compiled.stale_sources():
    os.environ[compiled.PURE_ENV] = "1"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's own database (tests/demo_database.py): built once per session, or read from
    $GPU_FINOPS_DEMO_OUT."""
    from tests.demo_database import demo_database

    return demo_database(tmp_path_factory.mktemp("demo"))
