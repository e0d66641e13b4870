"""What `advise quotas` minimises (gpu_finops.advise.figures), on the hand-made logs of
tests/pipeline/scenarios.py: idle cost and cost of delay over the same (steady) window, and
unservable demand kept out of the cost of delay, reported apart."""

from __future__ import annotations

import pytest

from gpu_finops.advise.figures import figures_of
from gpu_finops.advise.objectives import Objectives, violations


def test_the_cost_of_delay_is_over_the_steady_window_as_idle_is(con):
    figures = figures_of(con, "delay-window")
    # wa's 2 GPU-h pending in the warm-up are not in it; wb's 1 GPU-h in hour 10 is, at $2
    assert figures.cost_of_delay == pytest.approx(2.0)
    assert {t.team: t.cost_of_delay for t in figures.teams} == {"team-a": 0.0, "team-b": 2.0}
    assert figures.idle_cost == pytest.approx(78 * 2.0)
    assert (figures.unservable_workloads, figures.unservable_cost) == (0, 0.0)


def test_unservable_demand_is_apart_from_the_cost_of_delay(con):
    figures = figures_of(con, "unservable")
    # w_q's 1 GPU-h waiting for quota beside free GPUs at $2; w_big, w_never and w_t4 can never
    # be admitted (w_wide was rejected: no wait): not delay, counted apart with their cost
    assert figures.cost_of_delay == pytest.approx(2.0)
    assert figures.unservable_workloads == 3
    assert {t.team: t.unservable for t in figures.teams} == {"team-a": 2, "team-b": 1}
    assert figures.unservable_cost > 0
    assert figures.total == pytest.approx(figures.idle_cost + 2.0)
    # a trial may not make more workloads unservable than today
    assert violations(Objectives(max_unservable=3), figures) == [0.0]
    assert violations(Objectives(max_unservable=2), figures) == [1.0]
    assert violations(Objectives(), figures) == []
