"""A full disk (issue 24): one line naming the path, the previous output intact, no temporary
file left. On a real full file system: a small tmpfs mounted for the test (skipped where this
process may not mount one)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reliability.processes import assert_one_line_error, in_process


@pytest.fixture()
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> None:
    with open(disk / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("command", ["generate", "replay"])
def test_a_full_disk_is_one_line_and_the_previous_output_survives(small_disk, workspace, command):
    out = small_disk / "out"
    if command == "generate":
        argv = ["generate", "--preset", "tiny", "--out", str(out)]
        again = [*argv, "--seed", "9"]
    else:
        argv = ["replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
                str(workspace.inputs / "cluster.csv"), "--out", str(out)]
        again = [*argv, "--seed", "9"]
    assert in_process(*argv)[0] == 0
    before = _files(out)
    _fill(small_disk)
    code, _, err = in_process(*again)
    line = assert_one_line_error(command, code, err)
    assert "no space left on device" in line.lower() and str(small_disk) in line, line
    assert _files(out) == before
    leftovers = [p.name for p in small_disk.iterdir() if p.name not in ("out", "filler")]
    assert leftovers == [] and sorted(p.name for p in out.iterdir()) == sorted(before), leftovers
