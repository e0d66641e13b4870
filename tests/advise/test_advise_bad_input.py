"""`advise quotas` and its objectives file: bad input is one line naming the file and field,
exit 2, and nothing is replayed."""

from __future__ import annotations

import pytest

from gpu_finops.cli import main
from tests.advise.cases import TRIALS, advise_args, unused_quota_case


@pytest.mark.parametrize(("objectives", "message"), [
    ("[team.a]\np95_wait_hours = -1\n", "objectives.toml: field 'team.a.p95_wait_hours': must be a finite number >= 0"),
    ("[team.a]\np95_wait_hours = nan\n", "field 'team.a.p95_wait_hours': must be a finite number >= 0, got nan"),
    ("[team.a]\np95_wait_hours = inf\n", "field 'team.a.p95_wait_hours': must be a finite number >= 0, got inf"),
    ("[team.a]\nmax_gpu_hour_share = nan\n", "field 'team.a.max_gpu_hour_share': must be a finite number"),
    ("[search]\nfair_sharing_weight = [1, inf]\n", "field 'search.fair_sharing_weight': must be [low, high]"),
    ("[team.alhpa]\np95_wait_hours = 4\n",
     "objectives.toml: field 'team.alhpa': no workload of trace.csv has tenant 'alhpa' (its tenants: a)"),
    ("[team.\"a\u200b\"]\np95_wait_hours = 4\n", "no workload of trace.csv has tenant 'a\\u200b'"),
    ("[team.a]\nmin_gpu_hour_share = 2\n", "field 'team.a.min_gpu_hour_share': a share is between 0 and 1"),
    ("[search]\nborrowing_limit = [8, 2]\n", "field 'search.borrowing_limit': must be [low, high] whole GPUs"),
    ("[search]\nreclaim_within_cohort = [\"Sometimes\"]\n", "field 'search.reclaim_within_cohort'"),
    ("[search.cluster_queue.team-x]\nborrowing_limit = [0, 2]\n", "no ClusterQueue 'team-x' in queues.yaml"),
    ("[goals]\n", "field 'goals': unknown table"),
    ("[team.a\n", "not valid TOML"),
])
def test_bad_objectives(tmp_path, capsys, objectives, message):
    files = unused_quota_case(tmp_path)
    files["objectives"] = tmp_path / "objectives.toml"
    files["objectives"].write_text(objectives)
    assert main(advise_args(files, tmp_path / "out", *TRIALS)) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out" / "runs" / "today").exists()


def test_missing_price_book_and_bad_counts(tmp_path, capsys):
    files = unused_quota_case(tmp_path)
    files["prices"].unlink()
    args = advise_args(files, tmp_path / "out")
    args.remove("--prices")
    args.remove(str(files["prices"]))
    assert main(args) == 2
    assert "give --prices" in capsys.readouterr().err
    files = unused_quota_case(tmp_path / "again")
    assert main(advise_args(files, tmp_path / "out2", "--trials", "0")) == 2
    assert "--trials" in capsys.readouterr().err
    assert main(advise_args(files, tmp_path / "out3", "--workers", "0")) == 2
    assert "--workers: must be >= 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "out3").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (("--trials", "1000000"), "--trials: must be between 1 and 10,000 (as many replays as a sweep), got 1,000,000"),
    (("--batch", "0"), "--batch: must be between 1 and 10,000"),
    (("--seed", "-1"), "--seed: must be a whole number from 0 to 2^63-1, got -1"),
    (("--seed", str(2 ** 64)), "--seed: must be a whole number from 0 to 2^63-1"),
    (("--replay-seed", str(2 ** 70)), "--replay-seed: must fit 64 bits"),
    (("--replay-seed", str(2 ** 63 - 2)), "--replay-seed: must fit 64 bits with its 3 seed(s)"),  # 2^63-2 + 2
    (("--seeds", "0"), "--seeds: must be between 1 and 100, got 0"),
    (("--seeds", "101"), "--seeds: must be between 1 and 100, got 101"),
    (("--seeds", "100", "--trials", "101"), "--seeds: --trials × --seeds is 10,100 replays: at most 10,000"),
])
def test_counts_and_seeds_out_of_bounds_are_one_line_before_any_replay(tmp_path, capsys, flags, message):
    files = unused_quota_case(tmp_path)
    assert main(advise_args(files, tmp_path / "out", "--trials", "1", "--batch", "1", *flags)) == 2  # flags win
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_team_names_are_shown_and_written_safely(tmp_path, capsys):
    files = unused_quota_case(tmp_path)
    files["trace"].write_text(files["trace"].read_text().replace(",a,a,A100", ",=SUM(1)[bold]x,a,A100"))
    args = advise_args(files, tmp_path / "out", "--trials", "2", "--batch", "2")
    args.remove("-q")
    assert main(args) == 0
    assert "=SUM(1)[bold]x" in capsys.readouterr().out  # shown as written, not read as markup
    assert "'=SUM(1)[bold]x" in (tmp_path / "out" / "teams.csv").read_text()
