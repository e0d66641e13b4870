"""The C kernels built from their current sources, for tests in the pure-tree process.

The suite's process imports the pure tree, which never loads a C kernel
(`scheduler/compiled.py`); these tests build `native_walk.c` into a temporary folder with the
project's own build options (`tools/compile_scheduler.native_extensions`) and load it by path;
`arrow_columns.c` likewise.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _compile_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_compile_scheduler_for_tests", ROOT / "tools" / "compile_scheduler.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_kernel(folder: Path, name: str = "native_walk") -> ModuleType:
    """The C kernels compiled into `folder`; the one called `name` imported from there."""
    import os

    from setuptools import setup

    tool = _compile_tool()
    here = Path.cwd()
    os.chdir(ROOT)  # the extension's source path is relative to the project root
    try:
        setup(name="native-walk-under-test", ext_modules=tool.native_extensions(),
              script_args=["--quiet", "build_ext", "--build-lib", str(folder / "lib"),
                           "--build-temp", str(folder / "temp")])
    finally:
        os.chdir(here)
    built = next((folder / "lib").rglob(name + "*" + importlib.machinery.EXTENSION_SUFFIXES[0]))
    loader = importlib.machinery.ExtensionFileLoader(name, str(built))
    spec = importlib.util.spec_from_file_location(name, built, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules.pop(name, None)
    return module
