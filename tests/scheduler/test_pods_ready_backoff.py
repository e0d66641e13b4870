"""waitForPodsReady's requeue backoff for any requeue count.

Upstream: kueue pkg/workload/workload.go `UpdateRequeueState` builds
pkg/util/wait/backoff.go `NewBackoff(base, max, 2, jitter)` and asks `WaitTime(count)`: the
base first, then doubled while the next value stays at or under backoffMaxSeconds, the cap
from then on (wait.Backoff `Step` sets Duration to Cap once it passes it, and WaitTime stops
iterating there). backoffMaxSeconds 0 falls back to MaxInt64/2 nanoseconds.

The former replay formed base·2^(count−1) as an integer power: past ~1,000 requeues (a flavor
whose nodeLabels match no node, unlimited backoffLimitCount) the product no longer converted
to a float and the replay died with OverflowError on simulated day 63.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scheduler.admission.objects import WaitForPodsReady
from scheduler.admission.wait_for_pods_ready import AfterTimeout, PodsReadyTracker
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.sim import Environment

_MAX_INT64_HALF_S = ((2**63 - 1) // 2) / 1e9
_INT32 = 2**31 - 1


def _kueue_wait_time(base: int, most: int, count: int) -> float:
    """wait.Backoff stepped `count` times, in exact integers (no power past the cap is formed)."""
    cap = most if most else _MAX_INT64_HALF_S
    if base <= 0:
        return 0.0
    if count == 1:
        return float(base)
    doublings = count - 1
    if doublings > int(cap).bit_length() + 1 or base * 2**doublings > cap:
        return float(cap)
    return float(base * 2**doublings)


@given(base=st.integers(0, _INT32), most=st.integers(0, _INT32), count=st.integers(1, 2**20))
def test_the_backoff_is_kueues_for_any_requeue_count(base: int, most: int, count: int) -> None:
    settings = WaitForPodsReady(backoff_base_s=float(base), backoff_max_s=float(most))
    assert settings.backoff_s(count) == _kueue_wait_time(base, most, count)


def test_the_default_backoff_stops_at_3600s_even_after_ten_thousand_requeues() -> None:
    settings = WaitForPodsReady()
    assert [settings.backoff_s(n) for n in (1, 2, 7, 1_100, 10_000, 2**62)] == [60, 120, 3600, 3600, 3600, 3600]


@given(count=st.integers(0, 2**20), base=st.integers(1, 600), most=st.integers(1, 7200))
def test_an_eviction_at_any_requeue_count_requeues_within_the_cap(count: int, base: int, most: int) -> None:
    """The tracker's requeue after a timeout (the path that overflowed) for any prior count."""
    env = Environment(start=5_443_200.0)  # day 63
    settings = WaitForPodsReady(backoff_base_s=float(base), backoff_max_s=float(most))
    tracker = PodsReadyTracker(env, settings, on_timeout=lambda wl: None, on_all_ready=lambda: None)
    wl = AdmissionWorkload(run=None, name="w", local_queue="lq", cluster_queue="cq",  # type: ignore[arg-type]
                           requests={}, priority=0, seq=0, created_s=0.0, models=())
    wl.requeue_count = count
    assert tracker.after_timeout(wl) is AfterTimeout.BACKOFF
    assert wl.requeue_count == count + 1
    assert env.now + min(base, most) <= wl.requeue_at_s <= env.now + max(base, most)
    assert "requeued after a backoff" in tracker.backoff_message(wl)
