"""The compiled build (tools/compile_scheduler.py, `make install`) against the pure tree.

- Without a C compiler the compile step warns and leaves the pure tree.
- A source edited after compiling runs the pure tree (`scheduler/compiled.py`), never stale code.
- Where a C compiler is found, the compiled build is current, and the golden demo traces
  replay to byte-identical event logs under both builds; `replay --verify` passes compiled.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gpu_finops.generator import generate
from scheduler import compiled

REPO = Path(__file__).resolve().parents[1]
# The golden demo runs (`benchmarks.golden_logs --only demo`): the two profiles whose code
# paths differ most (group cycle with workload-aware preemption; pod by pod), with and
# without Kueue's admission layer.
GOLDEN_RUNS = (("gang-v1.37", False), ("gang-v1.37", True), ("kube-default", False), ("kube-default", True))


def _compile_tool():
    spec = importlib.util.spec_from_file_location("compile_scheduler", REPO / "tools" / "compile_scheduler.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["compile_scheduler"] = module
    spec.loader.exec_module(module)
    return module


def _can_compile() -> bool:
    tool = _compile_tool()
    return tool._compiler() is not None and importlib.util.find_spec("mypyc") is not None


def test_without_a_compiler_the_build_warns_and_stays_pure(monkeypatch, capsys):
    tool = _compile_tool()
    monkeypatch.setattr(tool, "_compiler", lambda: None)
    before = tool.compiled_files()
    assert tool.main([]) == 0
    assert "no C compiler found; the pure Python scheduler is used" in capsys.readouterr().err
    assert tool.compiled_files() == before  # nothing compiled, nothing removed


def test_every_scheduler_module_is_compiled_but_the_named_few():
    tool = _compile_tool()
    for module, reason in tool.NOT_COMPILED.items():
        assert (REPO / module).is_file(), module
        assert reason
    every = {p.relative_to(REPO).as_posix() for p in (REPO / "scheduler").rglob("*.py") if p.name != "__init__.py"}
    assert set(tool.modules()) == every - set(tool.NOT_COMPILED)


def test_compiled_files_are_never_committed():
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "*.so" in ignored
    assert f"/scheduler/{compiled.MANIFEST}" in ignored


def _fake_build(root: Path) -> Path:
    """A package folder with one compiled module and its manifest, as the compile step leaves it."""
    package = root / "scheduler"
    package.mkdir()
    source = package / "state.py"
    source.write_text("X = 1\n", encoding="utf-8")
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (package / f"state{suffix}").write_bytes(b"")  # mypyc's shim, and the module it loads
    (package / f"state__mypyc{suffix}").write_bytes(b"")
    manifest = {"sources": {"scheduler/state.py": compiled.source_record(source)}}
    (package / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return package


def test_a_source_edited_after_compiling_makes_the_build_stale(tmp_path):
    package = _fake_build(tmp_path)
    assert compiled.stale_sources(package) == []
    source = package / "state.py"
    os.utime(source, ns=(1, 1))  # touched (a checkout): the same text is still current
    assert compiled.stale_sources(package) == []
    source.write_text("X = 2\n", encoding="utf-8")
    assert compiled.stale_sources(package) == ["scheduler/state.py"]
    source.unlink()
    assert compiled.stale_sources(package) == ["scheduler/state.py"]
    (package / compiled.MANIFEST).unlink()  # a compile that stopped before its manifest
    assert compiled.stale_sources(package) == [compiled.MANIFEST]


def test_an_edited_c_kernel_makes_the_build_stale_and_the_pure_tree_never_loads_it(tmp_path, monkeypatch):
    package = _fake_build(tmp_path)
    kernel = package / "walk.c"
    kernel.write_text("/* v1 */\n", encoding="utf-8")
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (package / f"walk{suffix}").write_bytes(b"")  # one extension file per kernel, no mypyc shim
    assert compiled.stale_sources(package) == [f"scheduler/walk{suffix} (no source)"]  # built, not recorded
    manifest = json.loads((package / compiled.MANIFEST).read_text(encoding="utf-8"))
    manifest["sources"]["scheduler/walk.c"] = compiled.source_record(kernel)
    (package / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert compiled.stale_sources(package) == []
    (package / f"walk{suffix}").unlink()
    assert compiled.stale_sources(package) == [f"scheduler/walk{suffix} (missing)"]
    (package / f"walk{suffix}").write_bytes(b"")
    kernel.write_text("/* v2 */\n", encoding="utf-8")
    assert compiled.stale_sources(package) == ["scheduler/walk.c"]
    with pytest.raises(ModuleNotFoundError, match="a C kernel, not part of the pure tree"):
        compiled.SourcesFirst().find_spec("scheduler.walk", [str(package)])


def test_without_a_compiler_the_kernels_are_not_built_either(monkeypatch, capsys):
    tool = _compile_tool()
    monkeypatch.setattr(tool, "_compiler", lambda: None)
    before = tool.compiled_files()
    assert tool.main(["--native-only"]) == 0
    assert "no C compiler found; the pure Python scheduler is used" in capsys.readouterr().err
    assert tool.compiled_files() == before


def test_nothing_compiled_is_not_stale(tmp_path):
    (tmp_path / "scheduler").mkdir()
    assert compiled.stale_sources(tmp_path / "scheduler") is None


def _python(pure: bool) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    if pure:
        env[compiled.PURE_ENV] = "1"
    return [sys.executable, "-m", "gpu_finops.cli"], env


def _loaded_from(pure: bool, module: str = "scheduler.state.cluster_state") -> str:
    _, env = _python(pure)
    done = subprocess.run([sys.executable, "-c", f"import {module} as s; print(s.__file__)"],
                          capture_output=True, text=True, env=env, check=True, cwd=REPO)
    return done.stdout.strip()


def _walks_natively(pure: bool) -> bool:
    """Whether the node search's walk is the C kernel in that build."""
    _, env = _python(pure)
    done = subprocess.run([sys.executable, "-c", "from scheduler.framework import node_search as s; "
                           "print(s.KERNEL is not None)"], capture_output=True, text=True, env=env, check=True, cwd=REPO)
    return done.stdout.strip() == "True"


def test_the_compiled_build_is_current_and_the_pure_switch_works():
    if not _can_compile():
        pytest.skip("no C compiler or mypyc here: the pure tree is the only build")
    stale = compiled.stale_sources()
    assert stale is not None, "no compiled scheduler: `make install` compiles it"
    assert not stale, f"the compiled scheduler is older than {stale[:3]}: `make install` compiles it again"
    assert not _loaded_from(pure=False).endswith(".py")
    assert _loaded_from(pure=True).endswith("scheduler/state/cluster_state.py")
    assert _walks_natively(pure=False) and not _walks_natively(pure=True)


@pytest.fixture(scope="module")
def demo_inputs(tmp_path_factory):
    return generate("demo", tmp_path_factory.mktemp("golden") / "in", seed=42)


def _replay(files, out: Path, profile: str, queues: bool, pure: bool, verify: bool = False) -> str:
    command, env = _python(pure)
    args = [*command, "replay", "-q", "--trace", str(files.trace), "--cluster", str(files.cluster),
            "--profile", profile, "--out", str(out)]
    if queues:
        args += ["--queues", str(files.queues)]
    if verify:
        args.append("--verify")
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "running the pure Python tree" not in done.stderr
    return hashlib.sha256((out / "events.parquet").read_bytes()).hexdigest()


def test_both_builds_replay_the_golden_demo_byte_for_byte_and_verify_passes_compiled(demo_inputs, tmp_path):
    if not _can_compile():
        pytest.skip("no C compiler or mypyc here: the pure tree is the only build")
    jobs = [(profile, queues, pure) for profile, queues in GOLDEN_RUNS for pure in (True, False)]
    with ThreadPoolExecutor(max_workers=2) as pool:  # one replay per core
        hashes = dict(zip(jobs, pool.map(
            lambda job: _replay(demo_inputs, tmp_path / f"{job[0]}-{job[1]}-{job[2]}", *job), jobs), strict=True))
        verified = pool.submit(_replay, demo_inputs, tmp_path / "verified", "gang-v1.37", True, False, True)
        for profile, queues in GOLDEN_RUNS:
            assert hashes[(profile, queues, False)] == hashes[(profile, queues, True)], (profile, queues)
        assert verified.result() == hashes[("gang-v1.37", True, True)]
