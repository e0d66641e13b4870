"""Which build of the scheduler a process runs: the compiled one, or the pure Python tree.

`make compiled` (part of `make install`) compiles the scheduler's modules with mypyc in place
(`tools/compile_scheduler.py`), and a wheel build compiles them into the wheel (`setup.py`);
either way each extension file sits beside its `.py`, where Python's importer prefers it. The pure
tree stays the reference, and this module decides, once per process when `scheduler` is
first imported, whether the compiled modules may be used:

- ``GPU_FINOPS_PURE=1`` asks for the pure tree (how CI replays the golden traces under both
  builds and compares them);
- the compiled modules are used only while every source they were compiled from is
  unchanged (the manifest the compile step writes: size, mtime and sha256 per source) and
  the compiled set is whole: each source's two extension files (mypyc's shim ``X.so`` and
  its module ``X__mypyc.so``) present, and no extension file without its source. A source
  edited since, extension files without a manifest, a deleted extension file (half the set
  compiled, half pure: native classes met as Python ones, a segmentation fault), a deleted
  shim's module (ModuleNotFoundError) or a deleted source (its orphaned extension would
  still be imported) would not run the code the sources say: the process uses the pure
  tree instead and says so in one line on stderr.

The C kernels (``X.c``, e.g. the node walk) are part of the compiled set: recorded in the
manifest like a module, run only in the compiled build; their Python twins run in the pure tree.

The pure tree is imported by a finder placed first on `sys.meta_path` that loads every
`scheduler.*` module from its `.py` file (and none from a C kernel's); it changes nothing but
where the modules of this one package are read from. This module and the packages' `__init__` files are never
compiled (they choose the build).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PACKAGE = "scheduler"
PURE_ENV = "GPU_FINOPS_PURE"
MANIFEST = "compiled.json"  # beside this file; written by tools/compile_scheduler.py, ignored by git
BUILD_INFO = "build_info.json"  # beside this file in a wheel (setup.py writes it): the commit built
DISTRIBUTION = "gpu-finops"
PACKAGE_DIR = Path(__file__).resolve().parent


class SourceMissing(ModuleNotFoundError):
    """A scheduler module whose source was deleted while its compiled file stayed: the pure
    tree cannot run it (the CLI says so in one line)."""


class SourcesFirst(importlib.abc.MetaPathFinder):
    """Finds every `scheduler.*` module in its `.py` file, never in an extension file."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(PACKAGE + ".") or path is None:
            return None
        name = fullname.rpartition(".")[2]
        for entry in path:
            package = Path(entry, name, "__init__.py")
            if package.is_file():
                return importlib.util.spec_from_file_location(fullname, package,
                                                              submodule_search_locations=[str(package.parent)])
            module = Path(entry, name + ".py")
            if module.is_file():
                return importlib.util.spec_from_file_location(fullname, module)
            if Path(entry, name + ".c").is_file():  # a C kernel: its Python twin runs in the pure tree
                raise ModuleNotFoundError(f"{fullname}: a C kernel, not part of the pure tree", name=fullname)
            if any(Path(entry, name + suffix).is_file() for suffix in importlib.machinery.EXTENSION_SUFFIXES):
                # Never fall through to an orphaned extension file: the pure tree has no such module.
                raise SourceMissing(f"{fullname}: its source {module.name} is missing, only its compiled file "
                                    "is there: reinstall gpu-finops", name=fullname)
        return None


def use_sources() -> None:
    """Import the pure tree from now on (scheduler modules already imported stay as they are)."""
    if not any(isinstance(finder, SourcesFirst) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourcesFirst())


def extension_files(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The compiled modules' files under the package (any Python version's)."""
    return sorted({p for suffix in importlib.machinery.EXTENSION_SUFFIXES for p in package_dir.rglob(f"*{suffix}")})


def source_record(path: Path) -> dict[str, object]:
    """What the manifest keeps of one source: size and mtime (cheap to compare) and sha256
    (decides when they differ, as after a checkout that rewrote the same text)."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def compiled_set(sources: Sequence[str]) -> set[str]:
    """The extension files a compile of ``sources`` leaves (relative to the package's parent),
    for this Python: mypyc (``separate=True``) writes a shim ``X.so`` that loads the module
    itself from ``X__mypyc.so``; a C kernel ``X.c`` is one ``X.so``."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return ({f"{source.removesuffix('.py')}{ending}{suffix}" for source in sources if source.endswith(".py")
             for ending in ("", "__mypyc")}
            | {f"{source.removesuffix('.c')}{suffix}" for source in sources if source.endswith(".c")})


def stale_sources(package_dir: Path = PACKAGE_DIR) -> list[str] | None:
    """None when no module is compiled; else what keeps the compiled set from running, relative
    to the package's parent: sources changed or deleted since, ``X.so (missing)`` for an
    extension file of the set that is gone, ``X.so (no source)`` for one no source of the
    manifest accounts for; `[MANIFEST]` when the manifest is missing or unreadable."""
    present = extension_files(package_dir)
    if not present:
        return None
    try:
        manifest = json.loads((package_dir / MANIFEST).read_text(encoding="utf-8"))
        sources: dict[str, dict[str, object]] = manifest["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return [MANIFEST]
    stale = []
    for relative, recorded in sources.items():
        path = package_dir.parent / relative
        try:
            stat = path.stat()
            if stat.st_size == recorded["size"] and stat.st_mtime_ns == recorded["mtime_ns"]:
                continue
            if hashlib.sha256(path.read_bytes()).hexdigest() == recorded["sha256"]:
                continue
        except OSError:
            pass
        stale.append(relative)
    found = {path.relative_to(package_dir.parent).as_posix() for path in present}
    expected = compiled_set(list(sources))
    stale += [f"{name} (missing)" for name in sorted(expected - found)]
    stale += [f"{name} (no source)" for name in sorted(found - expected)]
    return stale


def choose_build() -> str:
    """"compiled", "pure" (asked for, or nothing compiled) or "pure (stale)"; installs the
    sources-first finder unless the compiled modules are used."""
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        use_sources()
        return "pure"
    stale = stale_sources()
    if stale is None:
        return "pure"
    if stale:
        use_sources()
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        what = ("is older than its sources" if all(name.endswith((".py", ".c")) for name in stale)
                else "is not the whole set its sources need")
        print(f"gpu-finops: the compiled scheduler {what} ({shown}); running the pure "
              "Python tree (`make install` compiles it again)", file=sys.stderr)
        return "pure (stale)"
    return "compiled"


def version() -> str:
    """The installed distribution's version (package metadata); "unknown" in a source tree
    that was never installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def commit(package_dir: Path = PACKAGE_DIR) -> str | None:
    """The git commit the code comes from: recorded in a wheel at build time, else asked of
    the checkout the package sits in (``-dirty`` when tracked files changed since); None
    when neither knows."""
    try:
        recorded = json.loads((package_dir / BUILD_INFO).read_text(encoding="utf-8"))
        return str(recorded["commit"]) if recorded.get("commit") else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    if not (package_dir.parent / ".git").exists():  # a wheel built without git, or no checkout
        return None
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=package_dir.parent, capture_output=True,
                              text=True, check=False, timeout=10)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=package_dir.parent,
                                capture_output=True, text=True, check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    found = head.stdout.strip()
    if head.returncode != 0 or not found:
        return None
    return found + ("-dirty" if status.stdout.strip() else "")


def build_record(build: str) -> dict[str, object]:
    """What `run.json` and `--version` say of the code that ran: the version, which build of
    the scheduler (``choose_build``'s answer) and the commit, when known."""
    return {"version": version(), "scheduler": build, "commit": commit()}
