"""Putting a finished folder in place of an old one, so that nobody sees half of either.

Shared by everything that writes a folder of outputs: the replay's run folder and the
pipeline's FOCUS export. It sits beside the event-log schema because it is part of the same
published promise (a run folder is the old one or the new one, never a mix) and because the
pipeline may import this package and no other part of the scheduler.

Replacing a folder deletes the old one, so it is done only to a folder the tool wrote itself:
`check_ours` refuses any folder holding something else (a user's ``main.py`` next to a
``run.json``, their own notes inside an export), a link, or a manifest it cannot parse.
"""

from __future__ import annotations

import ctypes
import errno
import glob
import json
import os
import shutil
import stat
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

FILES_MANIFEST = ".gpu-finops-files.json"
"""The list of files a tool-written folder holds (relative paths and sizes), in the folder."""


class NotOurs(Exception):
    """The folder holds something the tool did not write: replacing it would delete it.
    ``str()`` is one line that says what and why; callers wrap it in their own error type."""


@dataclass(frozen=True)
class FolderContents:
    """Everything under a folder, found without following links (relative POSIX paths)."""

    files: dict[str, int]  # regular file -> size in bytes
    folders: frozenset[str]
    others: tuple[str, ...]  # links, FIFOs, sockets, devices: never written by the tool


def folder_contents(folder: Path) -> FolderContents:
    """Walk ``folder`` without following links; the folder itself is not listed."""
    files: dict[str, int] = {}
    folders: set[str] = set()
    others: list[str] = []
    pending = [Path(folder)]
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                relative = Path(entry.path).relative_to(folder).as_posix()
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    folders.add(relative)
                    pending.append(Path(entry.path))
                elif stat.S_ISREG(mode):
                    files[relative] = entry.stat(follow_symlinks=False).st_size
                else:
                    others.append(relative)
    return FolderContents(files, frozenset(folders), tuple(sorted(others)))


def check_ours(
    out: Path,
    *,
    what: str,
    manifest: str,
    read_manifest: Callable[[dict], Iterable[str] | None],
) -> None:
    """Raise `NotOurs` unless ``out`` is missing, holds no file, or is exactly a folder the tool
    wrote: its ``manifest`` (a JSON object) parses, ``read_manifest`` recognises it and returns
    the files the folder may hold (relative paths; None when the document is not the tool's),
    and the folder holds those files (or fewer), the manifest, the folders on their paths and
    nothing else: no other file, no link, no FIFO.

    ``what`` names the folder in messages (``--out``, ``--export …/focus_cost_records``)."""
    out = Path(out)
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise NotOurs(f"{out}: {what} exists and is not a folder: it must name a folder to write")
    contents = folder_contents(out)
    if not contents.files and not contents.others:
        return  # empty (or holding only empty folders): nothing to lose
    allowed: set[str] = set()
    why = ""
    if manifest not in contents.files:
        why = f" (it has no {manifest})"
    else:
        try:
            document = json.loads((out / manifest).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            document = None
        listed = read_manifest(document) if isinstance(document, dict) else None
        if listed is None:
            why = f" (its {manifest} is not one gpu-finops wrote)"
        else:
            allowed = {*listed, manifest}
    parents = {p.as_posix() for name in allowed for p in Path(name).parents if p != Path(".")}
    strangers = [
        *contents.others,
        *sorted(name for name in contents.files if name not in allowed),
        *sorted(name + "/" for name in contents.folders if name not in parents),
    ]
    if strangers:
        shown = ", ".join(strangers[:3]) + (", …" if len(strangers) > 3 else "")
        raise NotOurs(
            f"{out}: {what} holds files gpu-finops did not write{why}: {shown}; replacing the "
            "folder would delete them: move them away or choose another folder"
        )


def write_files_manifest(folder: Path, note: dict | None = None) -> None:
    """Record every file under ``folder`` in ``folder/FILES_MANIFEST`` (see `check_ours`)."""
    contents = folder_contents(folder)
    document = {
        "written_by": "gpu-finops",
        **(note or {}),
        "files": dict(sorted((name, size) for name, size in contents.files.items() if name != FILES_MANIFEST)),
    }
    (Path(folder) / FILES_MANIFEST).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def files_in_manifest(document: dict) -> list[str] | None:
    """The files a `write_files_manifest` document lists; None if it is not one."""
    files = document.get("files")
    if document.get("written_by") != "gpu-finops" or not isinstance(files, dict):
        return None
    if not all(isinstance(name, str) and ".." not in Path(name).parts and not Path(name).is_absolute() for name in files):
        return None
    return list(files)


def replace_folder(staging: Path, out: Path) -> None:
    """Put the finished folder ``staging`` at ``out``; ``out`` is never missing or half.

    On Linux the two names are swapped in one step (``renameat2(RENAME_EXCHANGE)``) and the
    old folder, now under the staging name, is deleted: a reader, or a process killed at any
    moment, sees the old folder or the new one. Where the swap is not available (another
    system, or a file system without it) the old folder is moved aside first, which leaves
    an instant without ``out``.
    """
    staging, out = Path(staging), Path(out)
    if out.exists() and exchange_names(staging, out):
        shutil.rmtree(staging, ignore_errors=True)  # the old folder, after the swap
        return
    aside = out.parent / f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    if out.exists():
        os.replace(out, aside)
    os.replace(staging, out)
    shutil.rmtree(aside, ignore_errors=True)


def exchange_names(first: Path, second: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no libc symbol (glibc < 2.28, musl)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_cwd, exchange = -100, 2  # AT_FDCWD, RENAME_EXCHANGE from <fcntl.h> and <linux/fs.h>
    if renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def remove_orphaned_staging(out: Path) -> list[Path]:
    """Remove the temporary folders ``.NAME.tmp-PID`` beside ``out`` whose process is gone,
    and return them. A replay removes its own on every exit Python sees; one killed (SIGKILL,
    a crash in native code) cannot, so the next replay into ``out`` does. A folder of a live
    process (another replay running now) is left alone."""
    removed = []
    for path in Path(out).parent.glob(f".{glob.escape(Path(out).name)}.tmp-*"):
        pid = path.name.rpartition("-")[2]
        if not pid.isdigit() or path.is_symlink() or not path.is_dir() or _alive(int(pid)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid: leave its folder
    return True
