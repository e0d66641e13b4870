from __future__ import annotations

from pathlib import Path

import pytest
from sweeps import write_sweep

from gpu_finops.cli import main


@pytest.fixture(scope="session")
def local_sweep(tmp_path_factory) -> Path:
    """The four tiny scenarios run by the local executor (2 workers); its output folder."""
    folder = tmp_path_factory.mktemp("local-sweep")
    spec = write_sweep(folder)
    assert main(["sweep", str(spec), "--out", str(folder / "out"), "--workers", "2", "-q"]) == 0
    return folder / "out"
