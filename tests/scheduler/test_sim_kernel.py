"""The event kernel's same-time order is a written contract: FINISH → TIMEOUT → ARRIVE →
ADMIT → SCHEDULE → BIND, then scheduling order (seq)."""

import pytest

from scheduler.sim import Environment, Phase


def test_same_time_actions_run_in_phase_then_seq_order():
    env = Environment()
    seen: list[str] = []
    env.at(5, Phase.SCHEDULE, lambda: seen.append("schedule-1"))
    env.at(5, Phase.ARRIVE, lambda: seen.append("arrive"))
    env.at(5, Phase.SCHEDULE, lambda: seen.append("schedule-2"))
    env.at(5, Phase.FINISH, lambda: seen.append("finish"))
    env.at(3, Phase.BIND, lambda: seen.append("earlier bind"))
    env.run()
    assert seen == ["earlier bind", "finish", "arrive", "schedule-1", "schedule-2"]
    assert env.now == 5


def test_cancelled_actions_never_run_and_until_stops_the_clock():
    env = Environment()
    seen: list[float] = []
    handle = env.at(2, Phase.TIMEOUT, lambda: seen.append(2))
    env.at(1, Phase.ARRIVE, lambda: seen.append(1))
    env.at(10, Phase.ARRIVE, lambda: seen.append(10))
    handle.cancel()
    env.run(until=5)
    assert seen == [1] and env.now == 5


def test_scheduling_in_the_past_is_refused():
    env = Environment()
    env.at(4, Phase.ARRIVE, lambda: env.at(3, Phase.ARRIVE, lambda: None))
    with pytest.raises(ValueError, match="past"):
        env.run()
