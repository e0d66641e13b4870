"""The settings a fuzz test runs under: the loaded reliability profile, else the bounded one."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

BOUNDED = "reliability-bounded"
FUZZ = "reliability-fuzz"
_COMMON = {
    "deadline": None,  # a noisy two-core machine: time is not a property
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.filter_too_much, HealthCheck.large_base_example],
    "print_blob": True,
}
# The same examples on every `make test` run (derandomised, no example database) ...
settings.register_profile(BOUNDED, max_examples=60, derandomize=True, database=None, **_COMMON)
# ... and a long randomised run for `make fuzz`.
settings.register_profile(FUZZ, max_examples=3000, **_COMMON)


def fuzz_settings(share: float = 1.0) -> settings:
    """Settings for one fuzz test; ``share`` scales its example count (slow tests take less).

    Under ``--hypothesis-profile=reliability-fuzz`` the counts grow with the profile; in any
    other session the bounded profile applies.
    """
    current = settings.get_current_profile_name()
    base = settings.get_profile(current if current.startswith("reliability-") else BOUNDED)
    return settings(base, max_examples=max(5, int(base.max_examples * share)))
