"""A partial or orphaned compiled set never runs (issue 41): any missing extension file, shim or
source means the pure tree runs with the one-line warning, never a crash.

A tiny package shaped as `scheduler` (its `__init__` and `compiled.py`, two modules, one using
the other's native class) is compiled with mypyc as the compile step does it (one extension
per module, ``separate=True``), then parts of it are deleted.
Before: a deleted shim mixed compiled and pure modules (a segmentation fault on the real
tree, exit 139), a deleted ``__mypyc`` module was a ModuleNotFoundError traceback, and a
deleted source still imported its orphaned extension while the warning said the pure tree ran.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler import compiled
from tests.test_compiled_build import _can_compile

REPO = Path(__file__).resolve().parents[1]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
SHAPES = '''class Box:
    def __init__(self, size: int) -> None:
        self.size = size


def box(size: int) -> Box:
    return Box(size)
'''
USE = '''from scheduler.shapes import Box, box


def volume(n: int) -> int:
    b: Box = box(n)
    return b.size * b.size * b.size
'''
PROBE = ("import scheduler.volume as v, scheduler.shapes as s; "
         "print(v.volume(3), v.__file__.endswith('.py'), s.__file__.endswith('.py'))")


@pytest.fixture(scope="module")
def compiled_tree(tmp_path_factory) -> Path:
    if not _can_compile():
        pytest.skip("no C compiler or mypyc here: the pure tree is the only build")
    root = tmp_path_factory.mktemp("compiled")
    package = root / "scheduler"
    package.mkdir()
    for name in ("__init__.py", "compiled.py"):
        shutil.copy(REPO / "scheduler" / name, package / name)
    (package / "shapes.py").write_text(SHAPES, encoding="utf-8")
    (package / "volume.py").write_text(USE, encoding="utf-8")
    sources = ["scheduler/shapes.py", "scheduler/volume.py"]
    script = ("from mypyc.build import mypycify; from setuptools import setup; "
              f"setup(name='t', ext_modules=mypycify({sources!r}, separate=True, opt_level='0'), "
              "script_args=['--quiet', 'build_ext', '--inplace'])")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = {"sources": {s: compiled.source_record(root / s) for s in sources}}
    (package / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(root / "build", ignore_errors=True)
    return root


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV} | {"PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_whole_compiled_set_runs_compiled(compiled_tree):
    assert sorted(p.name for p in (compiled_tree / "scheduler").glob(f"*{SUFFIX}")) == sorted(
        Path(name).name for name in compiled.compiled_set(["scheduler/shapes.py", "scheduler/volume.py"]))
    done = _run(compiled_tree)
    assert (done.returncode, done.stdout, done.stderr) == (0, "27 False False\n", "")


@pytest.mark.parametrize("deleted", [f"shapes{SUFFIX}", f"shapes__mypyc{SUFFIX}", f"volume{SUFFIX}",
                                     f"volume__mypyc{SUFFIX}"])
def test_a_deleted_extension_file_runs_the_pure_tree_with_the_warning(compiled_tree, tmp_path, deleted):
    root = Path(shutil.copytree(compiled_tree, tmp_path / "tree"))
    (root / "scheduler" / deleted).unlink()
    done = _run(root)
    assert done.returncode == 0 and done.stdout == "27 True True\n", done.stderr[-2000:]
    warning = done.stderr.strip().splitlines()
    assert len(warning) == 1 and "not the whole set" in warning[0] and "(missing)" in warning[0], done.stderr
    assert "running the pure Python tree" in warning[0]


def test_a_deleted_source_never_imports_its_orphaned_extension(compiled_tree, tmp_path):
    root = Path(shutil.copytree(compiled_tree, tmp_path / "tree"))
    (root / "scheduler" / "volume.py").unlink()
    done = _run(root)
    assert "running the pure Python tree" in done.stderr
    assert done.returncode != 0 and "SourceMissing" in done.stderr and "volume.py is missing" in done.stderr
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV} | {"PYTHONPATH": str(root)}
    shapes_only = subprocess.run([sys.executable, "-c", "import scheduler.shapes as s; print(s.__file__)"],
                                 cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert shapes_only.stdout.strip().endswith("shapes.py"), shapes_only.stderr  # the pure tree, not the .so


def test_an_extension_file_no_source_accounts_for_is_not_the_whole_set(compiled_tree, tmp_path):
    root = Path(shutil.copytree(compiled_tree, tmp_path / "tree"))
    shutil.copy(root / "scheduler" / f"shapes{SUFFIX}", root / "scheduler" / f"extra{SUFFIX}")
    assert compiled.stale_sources(root / "scheduler") == [f"scheduler/extra{SUFFIX} (no source)"]
    done = _run(root)
    assert done.stdout == "27 True True\n" and "(no source)" in done.stderr, done.stderr


def test_a_replay_removes_the_temporary_folder_a_killed_replay_left(tmp_path):
    """Before: a replay that died in native code (the segmentation fault above) or by SIGKILL
    left `.RUN.tmp-PID` beside the output for good; the next replay into it removes it. A
    temporary folder of a process that still runs (another replay) is left alone."""
    from gpu_finops.generator import generate
    from tests.reliability.processes import in_process

    files = generate("tiny", tmp_path / "in", seed=1)
    out = tmp_path / "run"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = tmp_path / f".run.tmp-{gone.stdout.strip()}"  # the pid of a process that has ended
    (dead / "events.parquet").parent.mkdir()
    (dead / "events.parquet").write_bytes(b"half")
    live = tmp_path / f".run.tmp-{os.getppid()}"  # a process that runs
    live.mkdir()
    code, _, err = in_process("replay", "--trace", str(files.trace), "--cluster", str(files.cluster),
                              "--out", str(out))
    assert code == 0, err
    assert not dead.exists() and live.is_dir() and (out / "run.json").is_file()
