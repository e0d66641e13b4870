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


def test_actions_scheduled_together_run_as_if_scheduled_one_by_one():
    """`at_each` takes its seqs when called, in the order given, whatever the times: the
    same-time order against actions scheduled before and after it is `at`'s."""
    times = [7, 3, 7, 5, 3, 0, 7]

    def run(together: bool) -> list[str]:
        env = Environment()
        seen: list[str] = []
        env.at(7, Phase.ARRIVE, lambda: seen.append("before"))
        batch = [(t, lambda i=i: seen.append(f"a{i}")) for i, t in enumerate(times)]
        if together:
            env.at_each(Phase.ARRIVE, batch)
        else:
            for t, action in batch:
                env.at(t, Phase.ARRIVE, action)
        env.at(3, Phase.ARRIVE, lambda: seen.append("after"))
        env.at(3, Phase.FINISH, lambda: (seen.append("finish"), env.at(5, Phase.ARRIVE, lambda: seen.append("late"))))
        env.run()
        return seen

    assert run(together=True) == run(together=False)
    assert run(together=True) == ["a5", "finish", "a1", "a4", "after", "a3", "late", "before", "a0", "a2", "a6"]


def test_actions_scheduled_together_in_the_past_are_refused():
    env = Environment()
    env.at(4, Phase.ARRIVE, lambda: env.at_each(Phase.ARRIVE, [(5, lambda: None), (3, lambda: None)]))
    with pytest.raises(ValueError, match="past"):
        env.run()


def test_a_reserved_place_runs_its_action_exactly_where_at_would_have():
    env = Environment()
    order: list[str] = []
    env.at(1.0, Phase.ADMIT, lambda: order.append("first"))
    seq = env.reserve(1.0, Phase.ADMIT)  # taken now, scheduled later
    env.at(1.0, Phase.ADMIT, lambda: order.append("third"))
    env.at(1.0, Phase.ARRIVE, lambda: order.append("arrival"))
    assert not env.passed(1.0, Phase.ADMIT, seq)
    env.at_reserved(1.0, Phase.ADMIT, seq, lambda: order.append("second"))
    env.run()
    assert order == ["arrival", "first", "second", "third"]
    assert env.passed(1.0, Phase.ADMIT, seq)
    with pytest.raises(ValueError, match="already passed"):
        env.at_reserved(1.0, Phase.ADMIT, seq, lambda: None)


def test_a_reserved_place_never_scheduled_is_passed_once_a_later_action_runs():
    env = Environment()
    seen: list[bool] = []
    seq = env.reserve(0.0, Phase.ADMIT)
    env.at(0.0, Phase.ADMIT, lambda: seen.append(env.passed(0.0, Phase.ADMIT, seq)))
    env.at(0.0, Phase.ARRIVE, lambda: seen.append(env.passed(0.0, Phase.ADMIT, seq)))
    env.run()
    assert seen == [False, True]  # the arrival runs before the reserved place, the later admit after it
