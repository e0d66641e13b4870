from __future__ import annotations

from pathlib import Path

import pytest

from gpu_finops.cli import main
from tests.advise.cases import TRIALS, advise_args, unused_quota_case


@pytest.fixture(scope="session")
def unused(tmp_path_factory) -> tuple[dict[str, Path], Path]:
    """`advise quotas` on the unused-quota case (4 trials, 2 local workers): its files and DIR."""
    folder = tmp_path_factory.mktemp("unused")
    files = unused_quota_case(folder)
    assert main(advise_args(files, folder / "out", *TRIALS, "--workers", "2")) == 0
    return files, folder / "out"
