"""The output folder of ``advise quotas``: what the command may write there, checked before
anything is replayed (the project's one write discipline, docs/reliability.md).

- DIR is the command's while it runs: `output_lock(DIR)`, the lock every writing command takes
  (a second ``advise quotas`` on DIR waits for the first, then resumes its study).
- ``DIR/study.db`` is absent, or the Optuna study this command created: a plain SQLite file
  holding Optuna's tables only and the one study ``advise-quotas``, of the same inputs and
  settings. Anything else (the user's own SQLite database, a file that is not SQLite, a link)
  is refused with one line and left byte for byte: Optuna would otherwise add its tables to
  it. A new study is made beside it (``.study.db.tmp-PID``) and renamed into place whole.
- DIR's result files (`gpu_finops.advise.outputs.FILES`), ``trials/trial-N/queues.yaml`` and
  ``state/*.json`` are absent or listed with their current hash in their folder's
  ``.gpu-finops-files.json`` (they are written by `write_files`, which checks again).
- ``runs/today``, ``runs/trial-N`` and their other seeds' ``runs/today-sS``, ``runs/trial-N-sS``
  are absent or exactly a previous run folder
  (`check_run_folder`, the replay's own rule).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.writes import check_not_an_input, written_by_us

STUDY_FILE = "study.db"
STUDY_NAME = "advise-quotas"
STATE_FILES = ("today.json", "today.demand.json")
_SQLITE_MAGIC = b"SQLite format 3\x00"
# Optuna's RDB schema (optuna/storages/_rdb/models.py) and Alembic's version table.
_OPTUNA_TABLES = frozenset({
    "studies", "study_directions", "study_system_attributes", "study_user_attributes", "trial_heartbeats",
    "trial_intermediate_values", "trial_params", "trial_system_attributes", "trial_user_attributes",
    "trial_values", "trials", "version_info", "alembic_version"})
_NOT_OURS = "is not a study `advise quotas` created ({}): it is left as it is; give another --out or move it away"


def check_folder(out: Path, identity: dict[str, Any], result_files: Iterable[str],
                 inputs: Iterable[Path | None]) -> None:
    """Everything DIR holds that this run would replace is the command's own and none of its
    ``inputs`` (module docstring)."""
    for folder in (out, out / "runs", out / "trials", out / "state"):
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise InputError(folder, f"{'--out' if folder == out else folder.name} must be a folder, not a file or a link")
    result_files = list(result_files)
    check_not_an_input(inputs, files=[out / STUDY_FILE, *(out / name for name in result_files),  # one line at the CLI
                                      *(out / "state" / name for name in STATE_FILES)],
                       folders=[out / "runs", out / "trials"], what="--out")
    check_study(out, identity)
    strangers = [name for name in result_files if not written_by_us(out, name)]
    strangers += [f"state/{name}" for name in STATE_FILES if not written_by_us(out / "state", name)]
    trials = out / "trials"
    for folder in sorted(trials.glob("trial-*")) if trials.is_dir() else ():
        if folder.is_symlink() or not folder.is_dir() or not written_by_us(folder, "queues.yaml"):
            strangers.append(f"trials/{folder.name}" + ("" if folder.is_symlink() or not folder.is_dir()
                                                        else "/queues.yaml"))
    if strangers:
        shown = ", ".join(strangers[:3]) + (", …" if len(strangers) > 3 else "")
        raise InputError(out, f"holds files advise quotas did not write (or that were changed since): {shown}; "
                         "it would replace them: move them away or give another --out")
    from scheduler.commands import check_run_folder

    runs = out / "runs"
    for run in sorted(runs.iterdir()) if runs.is_dir() else ():
        if run.name == "today" or run.name.startswith(("today-s", "trial-")):  # every seed's run (`seed_run_name`)
            try:
                check_run_folder(run)
            except NotOurs as refused:
                raise InputError(run, str(refused).removeprefix(f"{run.resolve()}: ")) from None


def check_study(out: Path, identity: dict[str, Any]) -> None:
    """``DIR/study.db`` is absent, or this command's study of the same inputs and settings."""
    recorded = recorded_identity(out / STUDY_FILE)
    if recorded is not None and recorded != identity:
        changed = sorted(k for k in identity if recorded.get(k) != identity[k])
        raise InputError(out / STUDY_FILE, f"holds a study of other inputs or settings ({', '.join(changed)}): "
                         "give a new --out, or remove the folder to start again")


def recorded_identity(path: Path) -> dict[str, Any] | None:
    """The identity a study file of this command records; None when there is no file. Read
    through SQLite read-only: nothing is written to a file that turns out not to be ours."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(path, _NOT_OURS.format("not a plain file"))
    with path.open("rb") as head:
        if head.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
            raise InputError(path, _NOT_OURS.format("not an SQLite database"))
    try:
        try:
            connection = _read_only(path, "mode=ro")
        except sqlite3.OperationalError:  # a journal a killed write left needs a writer to roll it back
            connection = _read_only(path, "immutable=1")  # only to tell what the file is; Optuna rolls it back
        try:
            tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables <= _OPTUNA_TABLES or "studies" not in tables:
                raise InputError(path, _NOT_OURS.format("it holds tables other than an Optuna study's"))
            studies = connection.execute("SELECT study_id, study_name FROM studies").fetchall()
            if [name for _, name in studies] != [STUDY_NAME]:
                raise InputError(path, _NOT_OURS.format("it holds other studies"))
            row = connection.execute("SELECT value_json FROM study_user_attributes WHERE study_id = ? AND key = ?",
                                     [studies[0][0], "identity"]).fetchone()
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise InputError(path, _NOT_OURS.format(f"SQLite: {error}")) from None
    try:
        recorded = json.loads(row[0]) if row else None
    except (TypeError, ValueError):
        recorded = None
    if not isinstance(recorded, dict):
        raise InputError(path, _NOT_OURS.format("it records no inputs"))
    return recorded


def _read_only(path: Path, mode: str) -> sqlite3.Connection:
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # SQLite opens lazily
    except sqlite3.Error:
        connection.close()
        raise
    return connection


def create_study_file(out: Path, make: Callable[[str], None]) -> None:
    """A new ``DIR/study.db`` made whole beside it and renamed into place: ``make(url)`` creates
    the study at a temporary sibling's SQLAlchemy URL (and closes it); a file that appeared at
    ``study.db`` meanwhile is never replaced."""
    final = out / STUDY_FILE
    staging = out / f".{STUDY_FILE}.tmp-{os.getpid()}"
    staging.unlink(missing_ok=True)
    try:
        make(f"sqlite:///{staging}")
        os.link(staging, final)  # fails if study.db exists: nothing of the user's is replaced
    except FileExistsError:
        raise InputError(final, _NOT_OURS.format("it appeared while the study was being made")) from None
    finally:
        staging.unlink(missing_ok=True)
