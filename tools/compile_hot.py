"""Compile the replay's hottest scheduler modules with mypyc, in place (`make compiled`; opt-in).

    python tools/compile_hot.py           # compile HOT; without a C compiler: warn, stay pure
    python tools/compile_hot.py --clean   # remove every compiled module: the pure tree

The pure Python tree is the reference: a compiled module is the same source, and the
extension file it becomes sits beside its `.py`, where Python's importer prefers it, so an
editable install picks it up. The modules are one mypyc group whose shared library is
`scheduler/native__mypyc…so` (inside the package, so the editable install finds it too).
Compiled files are never committed (`.gitignore`: `*.so`). `make test-builds` replays the golden
traces under both builds and compares the logs (`benchmarks/golden_logs.py --compare`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The modules every placement attempt runs through (py-spy of the hidden 100k-pod replay):
# the state and its indexes, the filter/score loop, the GPU and resource filters. A small
# set keeps the compile to about 15 CPU s of mypyc and gcc.
HOT = (
    "scheduler/usage_index.py",
    "scheduler/place_index.py",
    "scheduler/virtual_free.py",
    "scheduler/state.py",
    "scheduler/level_views.py",
    "scheduler/framework/runtime.py",
    "scheduler/framework/index_walk.py",
    "scheduler/framework/tie_keys.py",
    "scheduler/plugins/gpu_fit.py",
)
GROUP = "scheduler.native"


def compiled_files() -> list[Path]:
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return sorted(p for p in (ROOT / "scheduler").rglob(f"*{suffix}"))


def clean() -> int:
    for path in compiled_files():
        path.unlink()
    return 0


def _compiler() -> str | None:
    command = (sysconfig.get_config_var("CC") or "cc").split()
    return shutil.which(command[0]) if command else None


def compile_hot() -> int:
    try:
        from mypyc.build import mypycify  # a dev dependency (part of mypy)
        from setuptools import setup
    except ImportError as error:
        print(f"warning: mypyc is not installed ({error}); the pure Python scheduler is used", file=sys.stderr)
        return 0
    if _compiler() is None:
        print("warning: no C compiler found; the pure Python scheduler is used", file=sys.stderr)
        return 0
    clean()
    with tempfile.TemporaryDirectory() as temp:
        try:
            setup(name="gpu-finops-hot", ext_modules=mypycify([str(ROOT / m) for m in HOT], group_name=GROUP,
                                                           target_dir=str(Path(temp) / "c")),
                  script_args=["--quiet", "build_ext", "--inplace", "--build-temp", str(Path(temp) / "t"),
                               "--build-lib", str(Path(temp) / "lib")])
        except (Exception, SystemExit) as error:  # a compiler that fails: stay pure, never half-built
            clean()
            print(f"warning: compiling the hot modules failed ({error}); the pure Python scheduler is used",
                  file=sys.stderr)
            return 0
    print(f"compiled {len(HOT)} scheduler modules with mypyc ({len(compiled_files())} extension files)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules (the pure tree)")
    args = parser.parse_args(argv)
    return clean() if args.clean else compile_hot()


if __name__ == "__main__":
    import os

    os.chdir(ROOT)  # mypyc and build_ext --inplace work relative to the project root
    sys.exit(main())
