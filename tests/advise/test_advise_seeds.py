"""`advise quotas --seeds N` (issue 40): a trial's figures are the means over N replay seeds with
the half-width of their 95 % t interval, and a trial is recommended as a change only when its
improvement over today's manifests, paired seed by seed, is beyond that noise. Known answers
computed by hand; the command's own run on a small case (2 seeds)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gpu_finops.advise.figures import RunFigures, TeamFigures
from gpu_finops.advise.outputs import trials_frame, verdict_words
from gpu_finops.advise.seeds import half_width, improvement, mean_figures
from gpu_finops.advise.space import Point
from gpu_finops.advise.trials import Advice, Trial
from gpu_finops.cli import main
from tests.advise.cases import advise_args, unused_quota_case


def _run(idle: float, delay: float, still_pending: int = 0) -> RunFigures:
    team = TeamFigures("a", 10, 1.0, 0.5, 100.0, 1.0, delay, still_pending)
    return RunFigures("advise-x", idle, delay, (team,))


# today's totals per seed: 100, 110, 120
TODAY = [_run(50, 50), _run(60, 50), _run(70, 50)]
# improvements per seed 5, -2, 10: mean 4.33, s = 6.0277, t(0.975, 2) = 4.3027, half-width 4.3027 * 6.0277 / √3 = 14.97
WITHIN = [_run(45, 50), _run(62, 50), _run(60, 50)]
# improvements per seed 20, 19, 21: mean 20, s = 1, half-width 4.303 / √3 = 2.48
BEYOND = [_run(30, 50), _run(41, 50), _run(49, 50)]


def test_an_improvement_within_the_spread_over_seeds_is_not_recommended():
    better = improvement(TODAY, WITHIN)
    assert (better.mean, better.ci95, better.seeds) == (4.33, 14.97, 3)
    assert not better.beyond_noise
    assert "within the noise" in better.verdict() and "keep today's manifests" in better.verdict()


def test_an_improvement_beyond_the_spread_over_seeds_is_recommended():
    better = improvement(TODAY, BEYOND)
    assert (better.mean, better.ci95) == (20.0, 2.48)
    assert better.beyond_noise
    assert better.verdict() == ("it beats today's manifests by $20.00 ± $2.48 (95 % over 3 seeds) "
                                "of idle cost + cost of delay")


def test_a_trial_no_better_than_today_and_one_seed():
    assert "no better than today's manifests" in improvement(TODAY, TODAY).verdict()
    one = improvement(TODAY[:1], BEYOND[:1])
    assert one.ci95 is None and one.beyond_noise and "one seed: the noise is not measured" in one.verdict()
    with pytest.raises(ValueError):
        improvement(TODAY, BEYOND[:2])


def test_the_mean_over_seeds_and_its_interval():
    assert half_width([100.0, 110.0, 120.0]) == 24.84  # 4.3027 * 10 / √3
    assert half_width([7.0]) is None
    mean = mean_figures([_run(50, 50, 1), _run(60, 50, 2), _run(70, 50, 2)])
    assert (mean.idle_cost, mean.cost_of_delay, mean.total) == (60.0, 50.0, 110.0)
    assert mean.teams[0].still_pending == 1.6667 and mean.teams[0].workloads == 10
    assert mean_figures([_run(1, 2, 3), _run(1, 2, 3)]).teams[0].still_pending == 3  # whole when every seed agrees


def _advice(trial_runs: list[RunFigures]) -> Advice:
    trial = Trial(0, {}, Point(), mean_figures(trial_runs), trial_runs)
    advice = Advice(Path("."), mean_figures(TODAY), TODAY, [trial], trial, [trial], 1, 0.0)
    from gpu_finops.advise.outputs import against_today

    advice.improvement = against_today(advice, trial)
    return advice


def test_the_outputs_name_the_spread_and_the_verdict():
    within, beyond = _advice(WITHIN), _advice(BEYOND)
    assert not within.change and beyond.change
    assert "within the noise" in verdict_words(within)
    row = trials_frame(within).row(0, named=True)
    assert row["seeds"] == 3 and row["improvement"] == 4.33 and row["improvement_ci95"] == 14.97
    assert row["beats_today"] is False and row["total_ci95"] == half_width([r.total for r in WITHIN])
    assert trials_frame(beyond).row(0, named=True)["beats_today"] is True


@pytest.mark.slow
def test_the_command_replays_every_configuration_under_each_seed(tmp_path, capsys):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    assert main(advise_args(files, out, "--trials", "2", "--batch", "2", "--seeds", "2", "--workers", "2")) == 0
    printed = capsys.readouterr().out
    assert "it beats today's manifests by" in printed
    assert "± $0.00 (today $" in printed and "means over 2 replay seeds (± the 95 % interval)" in printed
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == ["today", "today-s43", "trial-0000", "trial-0000-s43", "trial-0001", "trial-0001-s43"]
    rows = list(csv.DictReader((out / "trials.csv").open()))
    for column in ("seeds", "idle_cost_ci95", "cost_of_delay_ci95", "total_ci95", "improvement", "improvement_ci95",
                   "beats_today"):
        assert column in rows[0], column
    assert [r["seeds"] for r in rows] == ["2", "2"]
    advice = json.loads((out / "advice.json").read_text())
    assert advice["inputs"]["seeds"] == 2 and len(advice["today_seed_figures"]) == 2
    assert advice["recommended"]["change"] is True and len(advice["recommended"]["seed_figures"]) == 2
    mean = mean_figures([RunFigures.from_dict(f) for f in advice["recommended"]["seed_figures"]])
    assert mean.as_dict() == advice["recommended"]["figures"]
    assert "beats today's manifests" in (out / "recommended.yaml").read_text()


def test_a_profile_that_reads_no_seed_is_replayed_once_and_the_advice_says_why(tmp_path):
    from gpu_finops.advise.seeds import seeds_that_matter
    from tests.advise.cases import unused_quota_case

    count, why = seeds_that_matter("gang-v1.37", 3)
    assert count == 1 and why is not None and "reads no seed" in why and "--seeds 3" in why
    assert seeds_that_matter("kube-default", 3) == (3, None)  # DefaultPreemption draws its first node
    files = unused_quota_case(tmp_path)
    assert seeds_that_matter(str(files["random_ties"]), 3) == (3, None)
    assert seeds_that_matter("gang-v1.37", 1) == (1, None)
