"""Compile the scheduler with mypyc, in place, then its C kernels (part of `make install`).

    python tools/compile_scheduler.py                 # compile; without mypyc or a C compiler: warn, stay pure
    python tools/compile_scheduler.py --native-only   # only the C kernels (the modules stay Python)
    python tools/compile_scheduler.py --clean         # remove every compiled module: the pure tree

Every module of the scheduler is compiled but those `NOT_COMPILED` names (each with its
reason). The pure Python tree is the reference: a compiled module is the same source, and
the extension files it becomes sit beside its `.py`, where Python's importer prefers them,
so the editable install uses them. Modules are compiled separately (one extension each,
`-j` one job per core) at gcc -O2: -O3 measured no faster and compiles longer.

The compile step first removes the old build and its manifest, records each source (size,
mtime, sha256) before compiling, and writes the manifest (`scheduler/compiled.json`) only
once every module compiled: `scheduler/compiled.py` runs the compiled modules only while
their sources are unchanged, so an edit after compiling, or a compile that stopped half
way, runs the pure tree (with a one-line warning), never stale code. Compiled files and
the manifest are never committed (`.gitignore`).

The C kernels (`NATIVE`: plain C API, built by setuptools, nothing to install) are built
after mypyc, each into the extension file beside its `.c`, and recorded in the manifest like
a module: an edited `.c` runs the pure tree too. A kernel that fails to build leaves the
modules compiled and its Python twin running, with one warning line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scheduler"
NOT_COMPILED = {
    # Chooses between the builds, so it must run as source.
    "scheduler/compiled.py": "chooses the build",
    # mypyc's native classes cannot subclass these builtins; both modules are cold.
    "scheduler/verify.py": "VerificationError subclasses RuntimeError",
    "scheduler/trace/labels.py": "a JSON object type subclasses list",
    # Runtime-checkable Protocols are checked with isinstance; a compiled Protocol is not one.
    "scheduler/framework/interface.py": "runtime-checkable Protocols",
    "scheduler/framework/victims.py": "runtime-checkable Protocols",
    # celpy's values are plain Python objects; selectors are compiled and cached there.
    "scheduler/dra/cel.py": "evaluates CEL with celpy",
}
OPT_LEVEL = "2"
# C kernels: source -> module. No fused multiply-add: the scores must round as Python's do.
NATIVE = {"scheduler/framework/native_walk.c": "scheduler.framework.native_walk",
          "scheduler/eventlog/arrow_columns.c": "scheduler.eventlog.arrow_columns"}
NATIVE_CFLAGS = ["-O2", "-ffp-contract=off"]


def modules() -> list[str]:
    """The scheduler's modules to compile, relative to the project root: every one but the
    packages' `__init__` files (a compiled package does not find its uncompiled modules) and
    `NOT_COMPILED`."""
    found = (p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")
    return sorted(m for m in found if m not in NOT_COMPILED)


def _choice() -> object:
    """scheduler/compiled.py, loaded by path (importing `scheduler` would choose a build)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_scheduler_compiled", PACKAGE / "compiled.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compiled_files() -> list[Path]:
    choice = _choice()
    return list(choice.extension_files(PACKAGE))  # type: ignore[attr-defined]


def clean() -> int:
    for path in compiled_files():
        path.unlink()
    (PACKAGE / _choice().MANIFEST).unlink(missing_ok=True)  # type: ignore[attr-defined]
    return 0


def _compiler() -> str | None:
    """The C compiler setuptools would call: $CC, else the one Python was built with."""
    command = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    return shutil.which(command[0]) if command else None


def why_pure() -> str | None:
    """Why the scheduler cannot be compiled here (mypyc or a C compiler missing), or None."""
    try:
        import mypyc.build  # noqa: F401  (a dev dependency, part of mypy)
    except ImportError as error:
        return f"mypyc is not installed ({error})"
    if _compiler() is None:
        return "no C compiler found"
    return None


def native_extensions() -> list[object]:
    """The C kernels as setuptools extensions (paths relative to the project root)."""
    from setuptools import Extension

    return [Extension(name, [source], extra_compile_args=NATIVE_CFLAGS) for source, name in NATIVE.items()]


def build_native(temp: Path, jobs: str) -> dict[str, object]:
    """Build the C kernels in place; their manifest records, or none (after one warning line)
    when they do not build."""
    from setuptools import setup

    sources = {source: _choice().source_record(ROOT / source) for source in NATIVE}  # type: ignore[attr-defined]
    try:
        setup(name="gpu-finops-native", ext_modules=native_extensions(),
              script_args=["--quiet", "build_ext", "--inplace", "-j", jobs, "--build-temp", str(temp / "native-t"),
                           "--build-lib", str(temp / "native-lib")])
    except (Exception, SystemExit) as error:
        for source in NATIVE:
            for path in (ROOT / source).parent.glob(Path(source).stem + ".*"):
                if path.suffix not in (".c", ".pyi"):
                    path.unlink()
        print(f"warning: building the C kernels failed ({error}); their Python twins are used", file=sys.stderr)
        return {}
    return sources


def manifest(sources: dict[str, object]) -> str:
    """The manifest `scheduler/compiled.py` checks the compiled modules against."""
    return json.dumps({"python": sys.version.split()[0], "opt_level": OPT_LEVEL, "sources": sources}, indent=1) + "\n"


def compile_scheduler(native_only: bool = False) -> int:
    reason = "no C compiler found" if _compiler() is None else None if native_only else why_pure()
    if reason is not None:
        print(f"warning: {reason}; the pure Python scheduler is used", file=sys.stderr)
        return 0
    from setuptools import setup

    clean()
    choice = _choice()
    targets = [] if native_only else modules()
    # Recorded before compiling: an edit made while it compiles makes the build stale, not current.
    sources = {m: choice.source_record(ROOT / m) for m in targets}  # type: ignore[attr-defined]
    jobs = str(max(1, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as temp:
        if native_only:
            sources.update(build_native(Path(temp), jobs))
            if not sources:
                return 0
            (PACKAGE / choice.MANIFEST).write_text(manifest(sources), encoding="utf-8")  # type: ignore[attr-defined]
            print(f"compiled the C kernels ({len(compiled_files())} extension files)")
            return 0
        from mypyc.build import mypycify

        try:
            extensions = mypycify(targets, separate=True, opt_level=OPT_LEVEL, target_dir=str(Path(temp) / "c"))
            setup(name="gpu-finops-scheduler", ext_modules=extensions,
                  script_args=["--quiet", "build_ext", "--inplace", "-j", jobs, "--build-temp", str(Path(temp) / "t"),
                               "--build-lib", str(Path(temp) / "lib")])
        except (Exception, SystemExit) as error:  # a compiler that fails: stay pure, never half-built
            clean()
            print(f"warning: compiling the scheduler failed ({error}); the pure Python scheduler is used",
                  file=sys.stderr)
            return 0
        sources.update(build_native(Path(temp), jobs))
    (PACKAGE / choice.MANIFEST).write_text(manifest(sources), encoding="utf-8")  # type: ignore[attr-defined]
    print(f"compiled {len(targets)} scheduler modules with mypyc and {len(sources) - len(targets)} C kernels "
          f"({len(compiled_files())} extension files)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules (the pure tree)")
    parser.add_argument("--native-only", action="store_true", help="build only the C kernels (modules stay Python)")
    args = parser.parse_args(argv)
    return clean() if args.clean else compile_scheduler(args.native_only)


if __name__ == "__main__":
    os.chdir(ROOT)  # mypyc and build_ext --inplace work relative to the project root
    sys.exit(main())
