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
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler import compiled
from tests.demo_database import DemoRun, demo_run
from tests.worker_groups import WorkerGroups

compiled.use_sources()
if compiled.stale_sources():
    os.environ[compiled.PURE_ENV] = "1"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, tests sharing a fixture wider than one test run on one worker
    (tests/worker_groups.py)."""
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(WorkerGroups(), "worker-groups")


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The demo as a new user runs it (tests/demo_database.py): run once per session, or read
    from $GPU_FINOPS_DEMO_OUT."""
    return demo_run(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def demo_db(demo: DemoRun) -> Path:
    """The demo's own database."""
    return demo.db


@pytest.fixture(scope="session")
def ray_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real local Ray cluster's address (tests/sweep/ray_cluster.py), started once per session."""
    from tests.sweep.ray_cluster import session_ray_cluster

    with session_ray_cluster(tmp_path_factory) as address:
        yield address
