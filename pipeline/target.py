"""The database file a build replaces: which file it is, and holding it while it is rebuilt.

`build` writes a new database next to the target and renames it over the target. That is
only safe for a plain file nobody is writing to, so before anything else `BuildTarget`:

- resolves ``--db`` when it is a symbolic link (the file it points to is rebuilt, the link
  stays), and refuses a folder, a FIFO or device, and a file with other hard links (the
  rename would leave the other names on the old database);
- folds a write-ahead log (``X.wal``) left by a process that stopped without closing the
  database into the file, through DuckDB itself, so no committed table is lost;
- takes a shared lock on the file (the lock DuckDB's read-only connections take), held until
  the rename: a process with the database open read-write holds DuckDB's exclusive lock, so
  the build is refused with one line naming it; while the build runs, no process can open
  the file read-write, and readers (the dashboard, ``sql``) keep reading the old file.

The old file is copied through the locked descriptor: in POSIX, closing *any* descriptor of a
file drops the process's locks on it, so the build never opens the target a second time.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import struct
import sys
from pathlib import Path
from types import TracebackType

import duckdb

from pipeline.connect import connect
from pipeline.errors import PipelineError
from scheduler.eventlog.writes import output_lock

try:  # POSIX only: elsewhere the build runs without the lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def wal_of(path: Path) -> Path:
    return Path(f"{path}.wal")


class BuildTarget:
    """``with BuildTarget(db) as target:`` …build into a temporary file…
    ``target.replace_with(temp)``. See the module docstring."""

    def __init__(self, db: Path) -> None:
        self.given = Path(db)
        self.path = _real_target(self.given)
        self._fd: int | None = None
        self._existed = False
        self._writers = contextlib.ExitStack()

    def __enter__(self) -> BuildTarget:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # First the writers' lock (`scheduler.eventlog.writes.output_lock`): a second build or
        # sweep into this database waits here until the first has renamed its file into place,
        # then copies that file, so neither run is lost.
        self._writers.enter_context(output_lock(self.path))
        try:
            return self._hold()
        except BaseException:
            self._writers.close()
            raise

    def _hold(self) -> BuildTarget:
        if not self.path.exists():
            return self
        self._existed = True
        if wal_of(self.path).exists():
            _fold_write_ahead_log(self.given, self.path)
        try:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise PipelineError(f"{self.given}: cannot read it: {exc.strerror}") from None
        try:
            self._lock()
            if wal_of(self.path).exists():  # a writer came and went between the fold and the lock
                raise PipelineError(
                    f"{self.given}: another process wrote to it just now (it left {wal_of(self.path).name}): "
                    "build again"
                )
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
        self._writers.close()

    def copy_to(self, temp: Path) -> None:
        """Copy the current database to ``temp`` (nothing when there is none yet), keeping its
        permissions, without opening the target again (that would drop the lock)."""
        if self._fd is None:
            return
        mode = stat.S_IMODE(os.fstat(self._fd).st_mode)
        with open(temp, "wb") as out:
            offset = 0
            while chunk := os.pread(self._fd, 1 << 20, offset):
                out.write(chunk)
                offset += len(chunk)
        os.chmod(temp, mode)

    def replace_with(self, temp: Path) -> None:
        """Rename the finished ``temp`` over the target (the lock is still held)."""
        if not self._existed and self.path.exists():
            raise PipelineError(
                f"{self.given}: another process created it while this build ran: nothing was replaced"
            )
        os.replace(temp, self.path)

    def _lock(self) -> None:
        if fcntl is None or self._fd is None:
            return
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                return  # a file system without locks (ENOLCK): build as before, unlocked
            holder = _lock_holder(self._fd)
            raise PipelineError(
                f"{self.given}: another process{f' (pid {holder})' if holder else ''} has it open "
                "read-write: rebuilding would lose what it writes; close it (a read-only "
                "connection is fine) and build again"
            ) from None


def _real_target(db: Path) -> Path:
    """The file a build replaces: ``db``, or the file its symbolic link points to."""
    try:
        real = db.resolve() if db.is_symlink() else db
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise PipelineError(f"{db}: cannot follow the link: {exc}") from None
    if real.is_dir():
        raise PipelineError(f"{db}: is a folder: --db names the database file to create or update")
    if not real.exists():
        return real
    info = real.stat()
    if not stat.S_ISREG(info.st_mode):
        raise PipelineError(f"{db}: not a regular file: --db names the database file to create or update")
    if info.st_nlink > 1:
        raise PipelineError(
            f"{db}: the file has {info.st_nlink} hard links: a rebuild replaces the file, so the other "
            "names would keep the old database; build to a path with a single link"
        )
    return real


def _fold_write_ahead_log(given: Path, path: Path) -> None:
    """Apply the WAL a process left behind (it stopped without closing the database): DuckDB
    replays it into the file and removes it. Refused when the database is in use, or when
    the WAL does not belong to this file (it is then left where it is, for the user)."""
    try:
        con = connect(path, read_only=False)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "lock" in first.lower():
            raise PipelineError(
                f"{given}: another process has it open read-write (it has a write-ahead log, "
                f"{wal_of(path).name}): close it and build again"
            ) from None
        raise PipelineError(
            f"{given}: its write-ahead log {wal_of(path).name} cannot be applied ({first}); move the "
            ".wal file away if it does not belong to this database, then build again"
        ) from None
    try:
        con.execute("checkpoint")
    finally:
        con.close()


def _lock_holder(fd: int) -> int | None:
    """The pid of a process holding a lock that conflicts with a read lock (Linux), else None."""
    if fcntl is None or not sys.platform.startswith("linux"):
        return None
    # struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid
    query = struct.pack("hhqqi", fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0) + b"\0" * 8
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None
    kind, _, _, _, pid = struct.unpack_from("hhqqi", answer)
    return pid if kind != fcntl.F_UNLCK and pid > 0 else None
