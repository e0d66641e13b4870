"""`advise quotas --executor ray` on a real local Ray cluster (head on 127.0.0.1, 2 CPUs): the
same trials for the same seed as the local executor."""

from __future__ import annotations

import pytest

from gpu_finops.cli import main
from tests.advise.cases import advise_args, unused_quota_case

pytestmark = pytest.mark.slow
TRIALS = ("--trials", "4", "--batch", "2", "--seed", "11", "--seeds", "2")


def test_ray_gives_the_same_trials_as_local_workers(ray_address, tmp_path):
    files = unused_quota_case(tmp_path / "case")
    assert main(advise_args(files, tmp_path / "local", *TRIALS, "--workers", "2")) == 0
    assert main(advise_args(files, tmp_path / "ray", *TRIALS, "--executor", "ray", "--address", ray_address)) == 0
    for name in ("trials.csv", "pareto.csv", "teams.csv", "recommended.yaml"):
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text(), name
