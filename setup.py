"""The wheel's build (PEP 517, setuptools): pyproject.toml declares the package; this adds the
compiled scheduler and the build record.

    python -m build --wheel            # or: pip wheel --no-deps -w dist .

A wheel build compiles the scheduler's modules with mypyc and its C kernels (the same modules,
kernels and options as `tools/compile_scheduler.py`) under build/, outside the source tree, and
packs the extension files with the manifest `scheduler/compiled.py` checks them against. Where mypyc or a C
compiler is missing, or GPU_FINOPS_PURE=1 asks for it, the wheel is pure Python, with one
warning line. Every other build (an editable install, the sdist, the metadata) compiles
nothing: `make install` compiles the development tree in place itself (`make compiled`).

Every build writes `scheduler/build_info.json` into the build (never into the source tree):
the git commit it was built from, when the source is a git checkout, or $GPU_FINOPS_BUILD_COMMIT
(a container build, which has no .git).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _compile_tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("compile_scheduler", ROOT / "tools" / "compile_scheduler.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _compile_tool()
BUILDING_WHEEL = "bdist_wheel" in sys.argv[1:]
COMPILED_SOURCES: dict[str, object] = {}
ext_modules = []
if BUILDING_WHEEL:
    reason = "GPU_FINOPS_PURE=1" if os.environ.get("GPU_FINOPS_PURE", "").strip() not in ("", "0") else TOOL.why_pure()
    if reason is None:
        from mypyc.build import mypycify

        targets = TOOL.modules()
        os.chdir(ROOT)  # mypyc names the modules from paths relative to the project root
        # Recorded before compiling, as the in-place compile does.
        COMPILED_SOURCES = {m: TOOL._choice().source_record(ROOT / m) for m in targets}
        ext_modules = mypycify(targets, separate=True, opt_level=TOOL.OPT_LEVEL,
                               target_dir=str(ROOT / "build" / "mypyc"))
        # The C kernels, recorded in the manifest as the in-place build records them.
        COMPILED_SOURCES.update({source: TOOL._choice().source_record(ROOT / source) for source in TOOL.NATIVE})
        ext_modules += TOOL.native_extensions()
    else:
        print(f"warning: {reason}; building the pure Python wheel", file=sys.stderr)


class BuildWithRecord(build_py):
    """Writes the build record (and, for a compiled wheel, the manifest) into the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        package = Path(self.build_lib) / "scheduler"
        package.mkdir(parents=True, exist_ok=True)
        # scheduler/compiled.py asks git; a build without the checkout's .git (a container's) is told
        commit = os.environ.get("GPU_FINOPS_BUILD_COMMIT", "").strip() or TOOL._choice().commit()
        record = {"commit": commit or None}
        (package / "build_info.json").write_text(json.dumps(record) + "\n", encoding="utf-8")
        if COMPILED_SOURCES:
            (package / TOOL._choice().MANIFEST).write_text(TOOL.manifest(COMPILED_SOURCES), encoding="utf-8")


setup(ext_modules=ext_modules, cmdclass={"build_py": BuildWithRecord},
      options={"build_ext": {"parallel": os.cpu_count() or 1}})  # one compile per core
