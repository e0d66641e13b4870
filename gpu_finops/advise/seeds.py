"""``advise quotas`` over several replay seeds: a trial's figures are the means of its replays,
each objective has its spread, and a trial is recommended over today's manifests only when its
improvement is beyond that spread.

The replay's seed is read by the keyed tie draw (``tie_break = "random"``) and by the seeded
plugins (RandomScore, DefaultPreemption's first candidate node): under such a profile one replay
of a configuration is one draw, and two configurations that differ by less than the draws do
cannot be told apart by one replay each. Every configuration, today's included, is then
replayed under the same seeds, ``--replay-seed`` and the ``--seeds`` − 1 after it. Under a
profile that reads no seed (the shipped gang profiles: heap-order ties, workload-aware
preemption) every seed gives the same event log, so the advisers replay once
(`seeds_that_matter`) and say so, rather than report a spread of zero as measured noise.

- **Mean and spread.** A figure over the seeds is their mean; its spread is the half-width of
  the 95 % Student t interval of that mean, ``t(0.975, n−1) · s / √n`` (``s`` the sample
  standard deviation over the ``n`` seeds; the t quantile is `dashboards.budgets.student_t_quantile`,
  the one the budget forecast uses). One seed measures no spread (None).
- **Beyond the noise.** Today and the trial ran under the same seeds, so their totals (idle
  cost + cost of delay) pair up seed by seed: the improvement per seed is
  ``d_k = today_k − trial_k``, and the trial is recommended only when the 95 % t interval of
  the mean improvement lies wholly above zero: ``mean(d) − t(0.975, n−1) · s_d / √n > 0`` (a
  paired t test, one-sided at 2.5 %). Pairing takes out what the seed does to both alike. With
  one seed nothing is measured: a lower total is recommended and the advice says the noise was
  not measured.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from gpu_finops.advise.figures import RunFigures, TeamFigures

MAX_SEEDS = 100  # a trial is this many replays at most (and trials × seeds is bounded as a sweep is)
CONFIDENCE = 0.95


def seeds_that_matter(profile: str, seeds: int) -> tuple[int, str | None]:
    """How many of ``seeds`` replay seeds can change a replay under ``profile`` (a shipped name
    or a TOML path): all of them when the profile reads its seed, else one, with the line that
    says why (None when nothing is cut)."""
    from scheduler.framework.profile import load_profile

    if seeds == 1 or load_profile(profile).reads_seed:
        return seeds, None
    return 1, (f"--seeds {seeds}: profile {profile} reads no seed (heap-order ties, no seeded plugin), so every "
               "seed gives the same event log: one replay per configuration, no noise to measure")


def replay_seeds(first: int, count: int) -> list[int]:
    """The seeds every configuration is replayed under: ``first`` and the ``count`` − 1 after it."""
    return [first + k for k in range(count)]


def seed_run_name(name: str, k: int, seed: int) -> str:
    """The run folder (under ``DIR/runs``) of a configuration's ``k``-th seed: the first keeps the
    configuration's own name (``today``, ``trial-0003``), the others add their seed (``today-s43``)."""
    return name if k == 0 else f"{name}-s{seed}"


def half_width(values: list[float]) -> float | None:
    """Half-width of the 95 % t interval of the mean of ``values``; None for one value."""
    if len(values) < 2:
        return None
    from dashboards.budgets import student_t_quantile

    quantile = student_t_quantile(0.5 + CONFIDENCE / 2, len(values) - 1)
    return round(quantile * statistics.stdev(values) / math.sqrt(len(values)), 2)


@dataclass(frozen=True)
class Improvement:
    """A trial against today's manifests, seed by seed, on idle cost + cost of delay."""

    mean: float  # today's total − the trial's, mean over the seeds (> 0: the trial costs less)
    ci95: float | None  # half-width of its 95 % t interval; None with one seed
    seeds: int

    @property
    def beyond_noise(self) -> bool:
        """The whole 95 % interval of the improvement is above zero (one seed: the mean is)."""
        return self.mean - (self.ci95 or 0.0) > 0

    def words(self) -> str:
        """'$1,234.00 ± $56.00 (95 % over 3 seeds)', or with one seed, that the noise is not measured."""
        if self.ci95 is None:
            return f"${self.mean:,.2f} (one seed: the noise is not measured)"
        return f"${self.mean:,.2f} ± ${self.ci95:,.2f} (95 % over {self.seeds} seeds)"

    def verdict(self) -> str:
        """What the advice says of the trial against today's manifests, in one sentence."""
        if self.beyond_noise:
            return f"it beats today's manifests by {self.words()} of idle cost + cost of delay"
        if self.mean <= 0:
            return (f"no change recommended: it is no better than today's manifests (improvement {self.words()}): "
                    "keep today's manifests")
        return (f"no change recommended: within the noise: its improvement over today's manifests, {self.words()}, "
                "is not beyond the spread over the replay seeds: keep today's manifests")


def improvement(today: list[RunFigures], trial: list[RunFigures]) -> Improvement:
    """The trial's improvement over today, paired seed by seed (both lists in seed order)."""
    if len(today) != len(trial) or not today:
        raise ValueError(f"today and the trial need the same seeds, got {len(today)} and {len(trial)} runs")
    differences = [a.total - b.total for a, b in zip(today, trial, strict=True)]
    return Improvement(round(statistics.fmean(differences), 2), half_width(differences), len(differences))


def mean_figures(runs: list[RunFigures]) -> RunFigures:
    """The figures of one configuration over its seeds: every figure the mean of the seeds',
    rounded as a single run's are (`gpu_finops.advise.figures`); a count stays whole when every
    seed gives the same. A team missing from a seed's run counts as absent there (no workload)."""
    if len(runs) == 1:
        return runs[0]
    teams = []
    for name in sorted({t.team for run in runs for t in run.teams}):
        per_seed = [run.team(name) for run in runs]
        present = [t for t in per_seed if t is not None]

        def mean(key: str, places: int, present: list[TeamFigures] = present) -> float:
            values = [float(getattr(t, key)) for t in present]
            value = round(statistics.fmean(values), places)
            return int(value) if len(set(values)) == 1 and value.is_integer() else value

        teams.append(TeamFigures(name, int(mean("workloads", 0)), mean("p95_wait_h", 4), mean("median_wait_h", 4),
                                 mean("gpu_hours", 2), mean("gpu_hour_share", 4), mean("cost_of_delay", 2),
                                 mean("still_pending", 4), mean("unservable", 4), mean("unservable_cost", 2)))
    return RunFigures(runs[0].run_id, round(statistics.fmean(r.idle_cost for r in runs), 2),
                      round(sum(t.cost_of_delay for t in teams), 2), tuple(teams))
