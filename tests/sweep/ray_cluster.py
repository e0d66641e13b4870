"""A real Ray cluster on this machine for the Ray executor tests: `ray start --head --block` on
127.0.0.1 with 2 CPUs and no dashboard, in its own process group, stopped (SIGINT to the group,
as Ctrl-C would) when the tests are done. One per test session (the ``ray_address`` fixture of
tests/conftest.py), shared by the sweep's and the advisers' Ray tests: two heads at once would
compete for Ray's fixed ports, and the tests that use it run on one pytest-xdist worker."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

START_TIMEOUT_S = 120
SOCKET_PATH_LIMIT = 107  # bytes of an AF_UNIX path, as Ray checks them
# Ray's longest socket path below its --temp-dir: a session dir (start time, microseconds and a
# process id of up to 7 digits) and the object store's socket.
RAY_SOCKET_BELOW_TEMP_DIR = "/session_2026-12-07_15-21-40_822060_4194304/sockets/plasma_store"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@contextmanager
def local_ray_cluster(temp_dir: Path) -> Iterator[str]:
    """Yields the head's address (127.0.0.1:PORT) once the cluster accepts drivers."""
    ray = shutil.which("ray", path=str(Path(sys.executable).parent))
    if ray is None:
        pytest.skip("Ray is not installed in this environment (make install installs the ray extra)")
    port = _free_port()
    # A short temp dir: Ray's unix sockets live there and their paths must stay under 108 bytes.
    temp_dir.mkdir(parents=True, exist_ok=True)
    head = subprocess.Popen(
        [ray, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
    )
    output: list[str] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        assert head.stdout is not None
        while time.monotonic() < deadline:
            line = head.stdout.readline()
            if not line and head.poll() is not None:
                raise AssertionError(f"ray start exited with {head.returncode}: {''.join(output)[-2000:]}")
            output.append(line)
            if "Ray runtime started" in line:
                break
        else:
            raise AssertionError(f"Ray did not start within {START_TIMEOUT_S} s: {''.join(output)[-2000:]}")
        yield f"127.0.0.1:{port}"
    finally:
        if _group_alive(head.pid):
            os.killpg(head.pid, signal.SIGINT)  # the head stops its GCS, raylet and workers
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                head.poll()  # reap the head: a zombie would keep its process group "alive"
                if not _group_alive(head.pid):
                    break
                time.sleep(0.2)
            if _group_alive(head.pid):
                os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=30)
        if head.stdout is not None:
            head.stdout.close()


@contextmanager
def session_ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`local_ray_cluster` in a temp dir short enough for Ray's unix sockets (paths are limited
    to 107 bytes): pytest's own temp dir when Ray's longest socket path fits below it, else a
    short one beside it. (pytest numbers its temp dirs on: past pytest-999 a fixed margin
    that used to fit stops fitting.)"""
    base = tmp_path_factory.getbasetemp()
    fits = len(str(base)) + len("/ray99") + len(RAY_SOCKET_BELOW_TEMP_DIR) <= SOCKET_PATH_LIMIT
    temp = tmp_path_factory.mktemp("ray") if fits else Path(tempfile.mkdtemp(prefix="gf-ray-"))
    try:
        with local_ray_cluster(temp) as address:
            yield address
    finally:
        if not str(temp).startswith(str(base)):
            shutil.rmtree(temp, ignore_errors=True)
