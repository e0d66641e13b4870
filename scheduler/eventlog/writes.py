"""The write discipline: how every command of gpu-finops puts an output on disk.

Five rules, one module (docs/reliability.md, "One write discipline"):

1. **Never over an input.** `check_not_an_input` refuses an output that is one of the
   command's own input files, or a folder to be replaced that holds one.
2. **One writer at a time.** `output_lock` is an exclusive lock beside the output (the same
   lock `build` takes on its database): two commands writing one output take turns, and one
   that waits longer than `LOCK_WAIT_S` stops with one line naming the holder.
3. **Only what it wrote.** A folder is replaced only when it is exactly one the tool wrote
   (`scheduler.eventlog.files.check_ours`); a file in a folder of the user's is replaced only
   when the folder's manifest (`FILES_MANIFEST`) lists it with the same hash, or when it
   already holds the very bytes to be written (`write_files`).
4. **Old or new, never half, never none.** Everything is written to a temporary sibling and
   swapped in (`write_file`, `write_files`, `files.replace_folder`).
5. **A failed write is one line.** A full disk (or a read-only folder) raises `WriteFailed`
   naming the path; the temporary sibling is removed and the previous output is intact.

It sits with the event-log contract because every stage may import this package: the
scheduler, the pipeline and the dashboard (import-linter allowlists in pyproject.toml). It
imports nothing but the standard library and `scheduler.eventlog.files` / `.text`.

Also here, because every stage writes them: `sha256_file` (the hash recorded for an input)
and `neutralise_formula` (a CSV cell a spreadsheet would run as a formula gets a quote).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from scheduler.eventlog.files import FILES_MANIFEST, NotOurs
from scheduler.eventlog.text import printable

try:  # POSIX only: elsewhere commands write without the lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_WAIT_S = 600.0
"""How long a command waits for another one writing the same output before it stops."""
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet run a cell as a formula (OWASP CSV injection)."""
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO)


class OutputRefused(NotOurs):
    """Writing would replace a user's file, an input of the command, or wait forever for
    another writer. ``str()`` is one line naming the path; nothing was written."""


class WriteFailed(Exception):
    """The operating system refused a write (a full disk, a read-only folder): one line naming
    the path; the temporary file is gone and the previous output is as it was."""

    def __init__(self, path: Path, error: OSError) -> None:
        reason = os.strerror(error.errno) if error.errno else (error.strerror or str(error))
        super().__init__(f"{path}: cannot write it: {reason.lower()}; the previous output is intact")
        self.path = Path(path)
        self.errno = error.errno


# ------------------------------------------------------------------------------ shared rules


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def neutralise_formula(value: Any) -> Any:
    """Text a spreadsheet would evaluate as a formula gets a leading single quote. A carriage
    return becomes a line feed first (a CSV writer quotes a value with a line feed, not one
    with a lone carriage return, which a spreadsheet reads as a new row), and other control
    characters are neutralised (`printable`: ``cat`` of the file must not run an escape
    sequence). Anything that is not text (a number: a negative amount is data) is kept."""
    if isinstance(value, str):
        if "\r" in value:
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        value = printable(value, keep="\n\t")
        if value.startswith(FORMULA_PREFIXES):
            return "'" + value
    return value


# ------------------------------------------------------------------------------ rule 1: inputs


def check_not_an_input(inputs: Iterable[Path | None], *, files: Iterable[Path] = (),
                       folders: Iterable[Path] = (), what: str = "the output") -> None:
    """Raise `OutputRefused` when an output file is one of ``inputs`` (the same file, through
    any name or link), or when a folder to be replaced whole holds one of them."""
    given = [Path(p) for p in inputs if p is not None]
    existing = [p for p in given if p.exists()]
    for output in files:
        output = Path(output)
        for source in existing:
            with contextlib.suppress(OSError):
                if output.exists() and os.path.samefile(output, source):
                    raise OutputRefused(
                        f"{output}: {what} would overwrite the input {source}: write the output elsewhere")
    for folder in folders:
        folder = Path(folder).resolve()
        for source in given:
            resolved = source.resolve()
            if resolved == folder or resolved.is_relative_to(folder):
                raise OutputRefused(
                    f"{folder}: {what} holds the input {source}: replacing the folder would delete "
                    "it; write the output elsewhere")


# ------------------------------------------------------------------------------ rule 2: lock


def lock_path(target: Path) -> Path:
    """The lock file of an output: a hidden sibling, removed when the lock is released."""
    target = Path(target)
    return target.parent / f".{target.name.lstrip('.')}.lock"


@contextlib.contextmanager
def output_lock(target: Path, *, wait_s: float = LOCK_WAIT_S,
                waiting: Callable[[int | None], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock of ``target`` (a file or a folder) for the block.

    The lock is ``flock`` on a hidden sibling file (`lock_path`); the file is removed, still
    locked, on release, and a waiter that locked a file removed meanwhile tries again, so at
    most one process holds the lock of one path. A process that dies releases it (the
    kernel drops its locks). ``waiting(pid)`` is called once if another process holds it;
    after ``wait_s`` seconds `OutputRefused` names that process."""
    path = lock_path(target)
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteFailed(path.parent, error) from None
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as error:
            raise WriteFailed(path, error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _holder(fd)
            os.close(fd)
            if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                yield  # a file system without locks: write as before, unlocked
                return
            if time.monotonic() > deadline:
                raise OutputRefused(
                    f"{target}: another gpu-finops command{f' (pid {holder})' if holder else ''} is writing "
                    f"it; waited {wait_s:.0f} s: try again when it has finished") from None
            if not told and waiting is not None:
                waiting(holder)
            told = True
            time.sleep(0.05)
            continue
        if _same_file(fd, path):
            break
        os.close(fd)  # the lock file was removed by the holder as it released it: again
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError:
        pass  # the pid is only for messages
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


# ------------------------------------------------------------------------------ rules 4 and 5


def write_file(path: Path, data: bytes | str, *, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` through a temporary sibling, fsync'd, then `os.replace`: the
    old file or the new one. A failed write raises `WriteFailed` and leaves the old file.
    No ownership check: for files only the tool writes (state, manifests) or that a caller
    has already checked (`write_files`)."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise WriteFailed(path, error) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644 if mode is None else mode)
        os.replace(temp, path)
    except OSError as error:
        Path(temp).unlink(missing_ok=True)
        raise WriteFailed(path, error) from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path


def is_disk_error(error: BaseException) -> bool:
    """A write refused by the system (full disk, quota, read-only), not a bug."""
    return isinstance(error, OSError) and error.errno in _DISK_ERRORS


_DISK_MESSAGES = {errno.ENOSPC: "No space left on device", errno.EDQUOT: "Disk quota exceeded",
                  errno.EROFS: "Read-only file system", errno.EFBIG: "File too large"}


def disk_error_in(error: BaseException) -> OSError | None:
    """The system's refusal inside a library's own error (DuckDB raises ``IOException`` or,
    at a checkpoint, ``FatalException`` with the system's message in its text), as the
    `OSError` it stands for; None when the error is something else."""
    if is_disk_error(error):
        return error  # type: ignore[return-value]
    text = str(error)
    for code, message in _DISK_MESSAGES.items():
        if message.lower() in text.lower():
            return OSError(code, message)
    return None


# ------------------------------------------------------------------------------ rule 3: files in a folder


def write_files(folder: Path, files: Mapping[str, bytes | str], *, stale: Iterable[str] = (),
                inputs: Iterable[Path | None] = (), what: str = "--out",
                wait_s: float = LOCK_WAIT_S) -> list[Path]:
    """Write ``files`` (name → content) into ``folder`` and remove the ``stale`` names an
    earlier run of the command wrote that this one does not; return the paths written.

    Under the folder's lock. Refused (`OutputRefused`, nothing written) when a name is a link
    or not a plain file, when a file to be replaced or removed is neither listed in the
    folder's `FILES_MANIFEST` with its current hash nor already the same bytes (a file of
    the user's), or when an output is one of ``inputs``. Each file is swapped in from a
    temporary sibling; the manifest is rewritten last."""
    folder = Path(folder)
    for name in files:
        if not name or "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
            raise OutputRefused(f"{folder}: {name!r} is not a plain file name")
    payloads = {name: content.encode("utf-8") if isinstance(content, str) else content
                for name, content in files.items()}
    stale = [name for name in stale if name not in payloads]
    check_not_an_input(inputs, files=[folder / name for name in [*payloads, *stale]], what=what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteFailed(folder, error) from None
    with output_lock(folder / FILES_MANIFEST, wait_s=wait_s):
        listed = _read_manifest(folder)
        strangers = []
        for name in [*payloads, *stale]:
            target = folder / name
            try:
                info = target.lstat()
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode):
                strangers.append(f"{name} (not a plain file)")
                continue
            current = sha256_file(target)
            if current in listed.get(name, ()):
                continue
            if name in payloads and current == hashlib.sha256(payloads[name]).hexdigest():
                continue
            if name in stale:
                continue  # not ours: it stays as it is, and this output simply does not include it
            strangers.append(name)
        if strangers:
            shown = ", ".join(strangers[:3]) + (", …" if len(strangers) > 3 else "")
            raise OutputRefused(
                f"{folder}: {what} holds files gpu-finops did not write (or that were changed since): "
                f"{shown}; replacing them would lose them: move them away or choose another folder")
        new = {name: hashlib.sha256(payload).hexdigest() for name, payload in payloads.items()}
        # First the manifest naming the old hashes and the new ones: a command killed while it
        # swaps the files in leaves each file old or new, and both are known to be ours.
        _write_manifest(folder, {**listed, **{name: [*listed.get(name, ()), digest] for name, digest in new.items()}})
        written = [write_file(folder / name, payload) for name, payload in payloads.items()]
        for name in stale:
            if (folder / name).is_file() and sha256_file(folder / name) in listed.get(name, ()):
                (folder / name).unlink()
        kept = {name: digests for name, digests in listed.items()
                if name not in payloads and name not in stale and (folder / name).is_file()}
        _write_manifest(folder, {**kept, **{name: [digest] for name, digest in new.items()}})
    return written


def written_by_us(folder: Path, name: str) -> bool:
    """Whether `write_files` may replace ``folder/name``: there is no such file, or the folder's
    manifest lists it with its current hash (a file the tool wrote, unchanged since). A command
    with an optional output the user may edit (a starter price book) asks first and leaves a
    file of the user's alone; `write_files` checks again under the lock."""
    target = Path(folder) / name
    try:
        info = target.lstat()
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(info.st_mode):
        return False
    return sha256_file(target) in _read_manifest(Path(folder)).get(name, ())


def _read_manifest(folder: Path) -> dict[str, list[str]]:
    """name → the hashes a `write_files` manifest lists for it (nothing if none or not ours)."""
    try:
        document = json.loads((folder / FILES_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(document, dict) or document.get("written_by") != "gpu-finops":
        return {}
    hashes = document.get("sha256")
    if not isinstance(hashes, dict):
        return {}
    return {name: [d for d in digests if isinstance(d, str)] for name, digests in hashes.items()
            if isinstance(name, str) and isinstance(digests, list)}


def _write_manifest(folder: Path, hashes: dict[str, list[str]]) -> None:
    document = {"written_by": "gpu-finops", "sha256": dict(sorted(hashes.items()))}
    write_file(folder / FILES_MANIFEST, json.dumps(document, indent=1) + "\n")
