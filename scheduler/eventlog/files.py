"""Putting a finished folder in place of an old one, so that nobody sees half of either.

Shared by everything that writes a folder of outputs: the replay's run folder and the
pipeline's FOCUS export. It sits beside the event-log schema because it is part of the same
published promise (a run folder is the old one or the new one, never a mix) and because the
pipeline may import this package and no other part of the scheduler.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sys
import uuid
from pathlib import Path


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
