"""A lock one process of this machine holds at a time, for what the tests install outside their
own temp folders (Chromium from Debian's packages, the FOCUS validator's environment under the
user's cache): `make test`'s two pytest-xdist workers must not install the same thing at once
(dpkg refuses a second install; two `python -m venv` + `pip install` into one folder break
it), so the second waits, then finds it installed."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def machine_wide_lock(name: str) -> Iterator[None]:
    """Hold the lock ``name`` (a file under the temp folder, locked with flock) until the block ends."""
    with open(Path(tempfile.gettempdir()) / f"gpu-finops-tests-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
