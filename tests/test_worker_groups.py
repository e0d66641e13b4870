"""`make test` runs the suite on two pytest-xdist workers (`--dist loadgroup`): a fixture wider
than one test is still built once, because the tests that share it run on one worker
(tests/worker_groups.py), whichever fixtures link them and without listing them anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CONFTEST = '''
import os
import pytest
from tests.worker_groups import WorkerGroups


def pytest_configure(config):
    config.pluginmanager.register(WorkerGroups(), "worker-groups")


def built(name):
    with open(os.environ["BUILT_LOG"], "a") as log:
        log.write(f"{name} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n")
    return name


@pytest.fixture(scope="session")
def database():
    return built("database")


@pytest.fixture(scope="session")
def pages(database):  # the demo's pages: built on the database
    return built("pages")


@pytest.fixture(scope="session")
def browser():
    return built("browser")


@pytest.fixture(scope="module")
def replay():
    return built("replay")
'''

# Tests alternate between a shared fixture and none, so that plain load scheduling, which hands
# each worker a run of consecutive tests, would build each shared fixture on both workers.
TESTS = '''
def test_0(database): pass
def test_1(): pass
def test_2(pages): pass
def test_3(): pass
def test_4(pages, browser): pass
def test_5(): pass
def test_6(browser): pass
def test_7(): pass
def test_8(replay): pass
def test_9(): pass
def test_10(replay): pass
def test_11(): pass
'''


def _built_per_fixture(folder: Path, dist: str) -> Counter[str]:
    log = folder / f"built-{dist}.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "BUILT_LOG": str(log)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", dist, str(folder)],
                          capture_output=True, text=True, env=env, cwd=folder, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "12 passed" in done.stdout, done.stdout[-3000:]
    return Counter(line.split()[0] for line in log.read_text().splitlines())


def test_each_shared_fixture_is_built_once_on_two_workers(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(TESTS)
    # The check can fail: without the groups, the shared fixtures are built on both workers.
    assert max(_built_per_fixture(tmp_path, "load").values()) == 2
    assert _built_per_fixture(tmp_path, "loadgroup") == {"database": 1, "pages": 1, "browser": 1, "replay": 1}
