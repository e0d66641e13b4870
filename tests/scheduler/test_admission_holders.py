"""The holders' index (`admission.holders`): packed integer keys sort exactly as Kueue's
candidate-order tuples, and the index yields what a plain sort of the holders yields."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.admission.holders import Holders, order_key, packed_order_key

FRS = (("h100", "nvidia.com/gpu"), ("h100", "cpu"), ("a100", "nvidia.com/gpu"))
PRIORITIES = st.integers(min_value=-(2**40), max_value=2**40)
TIMES = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0**60, 1e-300]),
                  st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
SEQS = st.integers(min_value=0, max_value=2**64 - 1)


def _holder(name: str, priority: int, admitted_s: float | None, seq: int, frs=FRS[:1]) -> SimpleNamespace:
    return SimpleNamespace(name=name, priority=priority, admitted_s=admitted_s, seq=seq,
                           usage={fr: 1000 for fr in frs})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(PRIORITIES, TIMES, SEQS), min_size=2, max_size=30))
def test_packed_keys_sort_as_the_order_key_tuples(rows):
    holders = [_holder(f"w{i}", p, t, s) for i, (p, t, s) in enumerate(rows)]
    for a in holders:
        for b in holders:
            assert (packed_order_key(a) < packed_order_key(b)) == (order_key(a) < order_key(b))
            assert (packed_order_key(a) == packed_order_key(b)) == (order_key(a) == order_key(b))


def test_a_seq_outside_64_bits_is_refused():
    try:
        packed_order_key(_holder("w", 0, 1.0, 2**64))
    except ValueError as error:
        assert "seq" in str(error)
    else:
        raise AssertionError("a seq of 2**64 was packed")


OPERATIONS = st.lists(st.tuples(st.booleans(), st.integers(0, 39), st.integers(-2, 2), st.integers(0, 5),
                                st.sets(st.sampled_from(FRS), min_size=1)), max_size=80)


@settings(max_examples=150, deadline=None)
@given(OPERATIONS, st.sets(st.sampled_from(FRS), min_size=1), st.one_of(st.none(), st.integers(-2, 3)),
       st.sets(st.integers(0, 39)))
def test_ordered_holders_are_a_plain_sort_of_the_holders(operations, frs, bound, evicting):
    holders = Holders(["q"])
    live: dict[str, SimpleNamespace] = {}
    for add, number, priority, time, used in operations:
        name = f"w{number}"
        if add and name not in live:
            live[name] = _holder(name, priority, float(time), number, frs=sorted(used))
            holders.add("q", live[name])
        elif not add and name in live:
            holders.remove("q", live.pop(name))
    for number in evicting:
        if f"w{number}" in live:
            holders.mark_evicting(live[f"w{number}"])
    plain = sorted((wl for wl in live.values()
                    if set(wl.usage) & frs and wl.name not in holders.evicting
                    and (bound is None or wl.priority < bound)), key=order_key)
    assert [wl.name for wl in holders.ordered("q", frozenset(frs), bound)] == [wl.name for wl in plain]
