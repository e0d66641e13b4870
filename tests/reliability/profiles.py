"""The settings a fuzz test runs under: the loaded reliability profile, else the bounded one."""

from __future__ import annotations

from hypothesis import settings

BOUNDED = "reliability-bounded"


def fuzz_settings(share: float = 1.0) -> settings:
    """Settings for one fuzz test; ``share`` scales its example count (slow tests take less).

    Under ``--hypothesis-profile=reliability-fuzz`` the counts grow with the profile; in any
    other session the bounded profile applies.
    """
    current = settings.get_current_profile_name()
    base = settings.get_profile(current if current.startswith("reliability-") else BOUNDED)
    return settings(base, max_examples=max(5, int(base.max_examples * share)))
