from __future__ import annotations

import sys
from pathlib import Path

# The project is not installed into the venv: make the repository root importable whichever
# way pytest is started (`pytest` does not put the working directory on sys.path).
REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import pytest  # noqa: E402
import scenarios  # noqa: E402
from runs import write_prices  # noqa: E402

from pipeline.build import BuildResult, build  # noqa: E402


@pytest.fixture(scope="session")
def scenario_dirs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    return [make().write(root) for make in scenarios.ALL]


@pytest.fixture(scope="session")
def prices_csv(tmp_path_factory) -> Path:
    return write_prices(tmp_path_factory.mktemp("prices") / "prices.csv")


@pytest.fixture(scope="session")
def built(tmp_path_factory, scenario_dirs, prices_csv) -> BuildResult:
    """All scenarios built once into one database (read-only for the tests that share it)."""
    db = tmp_path_factory.mktemp("db") / "finops.duckdb"
    return build(scenario_dirs, prices_csv, db, show_progress=False)
