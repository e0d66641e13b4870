"""The wheel a user installs (issue 45): built pure and compiled (setup.py), each installed in a
fresh virtual environment, `gpu-finops --version` and `gpu-finops demo --no-serve` succeed, and
the two builds replay the demo's golden traces to byte-identical event logs.

Minutes (the compiled wheel compiles every scheduler module; two demos): run by
`make test-package` (GPU_FINOPS_PACKAGE_TESTS=1), not by `make test`. GPU_FINOPS_WHEELS=DIR
reuses wheels built before (`make wheel`, `GPU_FINOPS_PURE=1 make wheel`: one of each).

The fresh environments install the wheel alone (--no-index --no-deps) and see this
environment's third-party packages through a path file, so nothing is downloaded; the
project's own packages come from the wheel only (no PYTHONPATH, no checkout on the path).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from scheduler import compiled

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("GPU_FINOPS_PACKAGE_TESTS") != "1",
                       reason="the wheel tests take minutes: `make test-package` runs them"),
]
BUILDS = ("pure", "compiled")


def _readme_commands() -> dict[str, list[str]]:
    """The `gpu-finops` commands of the README's install block, by subcommand: the test runs
    them as written, in the environment the wheel was installed into (pipx's, here a venv)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install it as a tool", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, "the README's install block"
    lines = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    assert any(words[:2] == ["pipx", "install"] for words in lines)
    return {words[1]: words for words in lines if words and words[0] == "gpu-finops"}


def _can_compile() -> bool:
    from tests.test_compiled_build import _compile_tool

    return _compile_tool().why_pure() is None


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", compiled.PURE_ENV, "VIRTUAL_ENV")}
    return env | extra


@pytest.fixture(scope="module")
def built_from() -> str | None:
    """The commit the wheels are built from, read before building (commits made while they
    build do not change it); None for wheels built before (GPU_FINOPS_WHEELS)."""
    if os.environ.get("GPU_FINOPS_WHEELS"):
        return None
    return (compiled.commit() or "").removesuffix("-dirty") or None


@pytest.fixture(scope="module")
def wheels(tmp_path_factory, built_from) -> dict[str, Path]:
    given = os.environ.get("GPU_FINOPS_WHEELS")
    found: dict[str, Path] = {}
    if given:
        for wheel in Path(given).rglob("gpu_finops-*.whl"):
            found["compiled" if "-none-any" not in wheel.name else "pure"] = wheel
    out = tmp_path_factory.mktemp("wheels")
    for build in BUILDS:
        if build in found:
            continue
        if build == "compiled" and not _can_compile():
            continue
        env = _clean_env(**({compiled.PURE_ENV: "1"} if build == "pure" else {}))
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out / build), str(REPO)],
                              env=env, capture_output=True, text=True, timeout=3600, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        (found[build],) = (out / build).glob("gpu_finops-*.whl")
    return found


def _venv(root: Path, wheel: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    python = root / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # this environment's third-party packages, after the fresh one's own
    Path(site, "third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
                   check=True, timeout=600, env=_clean_env())
    return root / "bin"


@pytest.fixture(scope="module")
def installed(wheels, tmp_path_factory) -> dict[str, Path]:
    return {build: _venv(tmp_path_factory.mktemp(f"venv-{build}"), wheel) for build, wheel in wheels.items()}


def test_the_compiled_wheel_carries_its_extension_files_and_manifest(wheels):
    if "compiled" not in wheels:
        pytest.skip("no C compiler or mypyc here: only the pure wheel is built")
    names = zipfile.ZipFile(wheels["compiled"]).namelist()
    assert "scheduler/compiled.json" in names and "scheduler/build_info.json" in names
    assert any(name.endswith(".so") for name in names)
    assert not any(name.endswith(".so") for name in zipfile.ZipFile(wheels["pure"]).namelist())
    assert "scheduler/compiled.json" not in zipfile.ZipFile(wheels["pure"]).namelist()


@pytest.mark.parametrize("build", BUILDS)
def test_version_from_the_installed_wheel(installed, built_from, build, tmp_path):
    if build not in installed:
        pytest.skip("no C compiler or mypyc here: only the pure wheel is built")
    command = _readme_commands()["--version"]
    done = subprocess.run([str(installed[build] / command[0]), *command[1:]], capture_output=True, text=True,
                          env=_clean_env(), cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    line = done.stdout.strip()
    assert re.fullmatch(rf"gpu-finops \d+\.\d+\.\d+\S* \({build} scheduler, commit [0-9a-f]{{40}}(-dirty)?\)", line), line
    if built_from:  # built here, from this checkout's commit
        assert f"commit {built_from}" in line
    where = subprocess.run([str(installed[build] / "python"), "-c", "import scheduler.state.cluster_state as s; "
                            "print(s.__file__)"], capture_output=True, text=True, env=_clean_env(), cwd=tmp_path,
                           check=True).stdout.strip()
    assert ".venv" not in where and str(REPO) not in where  # the wheel's, not the checkout's
    assert where.endswith(".so" if build == "compiled" else ".py"), where


def test_both_wheels_run_the_demo_to_byte_identical_event_logs(installed, tmp_path):
    if "compiled" not in installed:
        pytest.skip("no C compiler or mypyc here: only the pure wheel is built")
    logs = {}
    command = _readme_commands()["demo"]
    assert command[-2:] == ["--out", "demo-out"]
    for build, bin_dir in installed.items():
        (tmp_path / build).mkdir()
        out = tmp_path / build / "demo-out"
        done = subprocess.run([str(bin_dir / command[0]), *command[1:], "-q"], capture_output=True, text=True,
                              env=_clean_env(), cwd=tmp_path / build, timeout=1800, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "running the pure Python tree" not in done.stderr
        runs = sorted(p.parent for p in out.glob("*/events.parquet"))
        assert len(runs) >= 2, runs  # the golden pair: gang-v1.37 and kube-default
        logs[build] = {run.name: hashlib.sha256((run / "events.parquet").read_bytes()).hexdigest() for run in runs}
        assert (out / "export" / "focus_metadata.json").is_file()
    assert logs["pure"] == logs["compiled"]


def test_an_installed_compiled_wheel_refuses_an_orphaned_module(installed, tmp_path):
    if "compiled" not in installed:
        pytest.skip("no C compiler or mypyc here: only the pure wheel is built")
    python = installed["compiled"] / "python"
    package = Path(subprocess.run([str(python), "-c", "import scheduler.compiled as c; print(c.PACKAGE_DIR)"],
                                  capture_output=True, text=True, env=_clean_env(), cwd=tmp_path,
                                  check=True).stdout.strip())
    assert package.is_relative_to(installed["compiled"].parent), package  # the installed copy, never the checkout
    (package / "shape.py").unlink()  # the last test of the module: the environment is thrown away
    done = subprocess.run([str(python), "-c", "import scheduler.shape"], capture_output=True, text=True,
                          env=_clean_env(), cwd=tmp_path, check=False)
    assert done.returncode != 0
    assert "scheduler/shape.py" in done.stderr and "running the pure Python tree" in done.stderr
    assert "its source shape.py is missing" in done.stderr


def test_without_a_c_compiler_the_wheel_is_pure_with_one_warning(tmp_path):
    # run after the module's other tests (a build of its own, in the checkout's build/ folder)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(REPO)],
                          env=_clean_env(CC=str(tmp_path / "no-such-cc")), capture_output=True, text=True,
                          timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    warnings = [line for line in output.splitlines() if "building the pure Python wheel" in line]
    assert warnings and all("warning: no C compiler found; building the pure Python wheel" in w for w in warnings)
    (wheel,) = tmp_path.glob("gpu_finops-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    assert not any(name.endswith(".so") for name in zipfile.ZipFile(wheel).namelist())
