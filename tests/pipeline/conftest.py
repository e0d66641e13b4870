from __future__ import annotations

import sys
from pathlib import Path

# The project is not installed into the venv: make the repository root importable whichever
# way pytest is started (`pytest` does not put the working directory on sys.path).
REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import duckdb  # noqa: E402
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
    """GPU prices per model, plus default CPU (per core-hour) and memory (per GiB-hour) rows."""
    return write_prices(tmp_path_factory.mktemp("prices") / "prices.csv")


@pytest.fixture(scope="session")
def built(tmp_path_factory, scenario_dirs, prices_csv) -> BuildResult:
    """All scenarios built once into one database, FOCUS 1.2 layout, with an export
    (read-only for the tests that share it)."""
    out = tmp_path_factory.mktemp("db")
    return build(scenario_dirs, prices_csv, out / "finops.duckdb", export=out / "export", show_progress=False)


@pytest.fixture(scope="session")
def built_split(tmp_path_factory, scenario_dirs, prices_csv) -> BuildResult:
    """The same scenarios in the FOCUS 1.3 split cost allocation layout, built through the
    command line (`gpu-finops build --focus-split`)."""
    from gpu_finops.cli import main

    out = tmp_path_factory.mktemp("db-split")
    db, export = out / "finops.duckdb", out / "export"
    argv = ["build", *map(str, scenario_dirs), "--prices", str(prices_csv), "--db", str(db),
            "--export", str(export), "--focus-split", "-q"]
    assert main(argv) == 0
    return BuildResult(db=db, run_ids=[d.name for d in scenario_dirs], export=export)


@pytest.fixture(scope="module")
def con(built):
    connection = duckdb.connect(str(built.db), read_only=True)
    yield connection
    connection.close()

