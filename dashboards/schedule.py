"""`gpu-finops schedule --config reports.toml [--state P]`: run the reports that are due, once.

A reports file lists reports, each with a cron expression (evaluated in UTC)::

    [[report]]
    name = "weekly-ml"                 # unique; names the report in the state and the messages
    cron = "0 6 * * MON"               # when it is due: Mondays 06:00 UTC
    db = "gpu-finops.duckdb"           # relative paths are relative to this file
    out = "reports/{name}/{from}"      # a folder per report; {name} {from} {to} {fire}
    period = "week"                    # day | week | month (the last complete one) | run
    team = "ml-research"               # optional: one team; all teams when left out
    run_id = "prod"                    # optional: the latest run when left out
    formats = ["html", "md", "csv"]    # optional: default html, md, csv
    budgets = "budgets.csv"            # optional: burn sections; the outcome names those over budget
    cost_centre_label = "cost-center"  # optional: the pod label of the cost centres (default
                                       # cost-center, else cost_center, where workloads carry one)
    group_by = "label:cost-center"     # optional: the chargeback per value of a pod label too

Each invocation (from cron or a systemd timer, docs/reports.md) finds, for every report, its
latest fire time up to now. If that fire time is newer than the one recorded in the state file,
the report is written for the period before it and the fire time is recorded; otherwise nothing
happens. So a report is produced once per fire time however often the runner is invoked, missed
fire times (machine off) are caught up once, and a failed report is retried on the next call.

Writes are atomic: the report is written into a temporary folder next to its target and renamed
into place; the state file is written to a temporary file and renamed. An exclusive lock on
``<state>.lock`` keeps two overlapping invocations from producing the same report twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from croniter import croniter

from dashboards.errors import DashboardError
from dashboards.report import FORMATS, budget_status, report_file_names, write_report
from scheduler.eventlog.files import FILES_MANIFEST, replace_folder
from scheduler.eventlog.text import parse_toml
from scheduler.eventlog.writes import output_lock, write_file

PERIODS = ("day", "week", "month", "run")
DEFAULT_FORMATS = ("html", "md", "csv")
STATE_VERSION = 1
_FIELDS = {"name", "cron", "db", "out", "period", "team", "run_id", "formats", "budgets", "group_by",
           "cost_centre_label"}
_PLACEHOLDERS = ("name", "from", "to", "fire")


@dataclass(frozen=True)
class ScheduledReport:
    """One ``[[report]]`` entry of a reports file, paths resolved."""

    name: str
    cron: str
    db: Path
    out: str  # a folder template: {name}, {from}, {to}, {fire}
    period: str
    team: str | None
    run_id: str | None
    formats: tuple[str, ...]
    base: Path  # the reports file's folder: relative output folders land under it
    budgets: Path | None = None  # a budgets file: burn sections, and the teams over budget named
    group_by: str | None = None  # "label:KEY": the chargeback per value of a pod label too
    cost_centre_label: str | None = None  # the pod label of the budgets' cost centres (default cost-center)


@dataclass(frozen=True)
class Outcome:
    """What one invocation did with one report."""

    name: str
    fire_time: datetime
    status: str  # "written", "not due", "would write" (dry run) or "failed"
    detail: str  # the output folder and fire time, or the error


# --------------------------------------------------------------------------------------------
# The reports file
# --------------------------------------------------------------------------------------------


def load_config(path: Path) -> list[ScheduledReport]:
    """Read and check a reports TOML; DashboardError naming the file, report and field."""
    path = Path(path)
    try:
        document = parse_toml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DashboardError(f"{path}: reports file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise DashboardError(f"{path}: not valid TOML: {exc}") from None
    unknown_top = set(document) - {"report"}
    if unknown_top:
        raise DashboardError(f"{path}: unknown table(s) {', '.join(sorted(unknown_top))}; "
                             "list reports as [[report]]")
    entries = document.get("report", [])
    if not isinstance(entries, list) or not entries:
        raise DashboardError(f"{path}: no [[report]] entries")
    reports: list[ScheduledReport] = []
    for index, entry in enumerate(entries):
        reports.append(_report(path, index, entry))
    names = [r.name for r in reports]
    for name in names:
        if names.count(name) > 1:
            raise DashboardError(f"{path}: report name {name!r} is used twice; names must be unique")
    return reports


def _report(path: Path, index: int, entry: dict[str, Any]) -> ScheduledReport:
    where = f"{path}: report[{index}]"

    def text(field: str, required: bool = True) -> str | None:
        value = entry.get(field)
        if value is None:
            if required:
                raise DashboardError(f"{where}: field {field!r} is required")
            return None
        if not isinstance(value, str) or not value.strip():
            raise DashboardError(f"{where}: field {field!r} must be a non-empty string")
        if "\0" in value:  # db, out, budgets name files (the system would raise "embedded null byte")
            raise DashboardError(f"{where}: field {field!r}: {value!r} holds a NUL byte, which no file name can")
        return value.strip()

    unknown = set(entry) - _FIELDS
    if unknown:
        raise DashboardError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(sorted(_FIELDS))}")
    name = text("name") or ""
    where = f"{path}: report {name!r}"
    cron = text("cron") or ""
    if not croniter.is_valid(cron):
        raise DashboardError(f"{where}: field 'cron' {cron!r} is not a cron expression "
                             "(five fields: minute hour day-of-month month day-of-week)")
    period = text("period", required=False) or "week"
    if period not in PERIODS:
        raise DashboardError(f"{where}: field 'period' {period!r}: use {', '.join(PERIODS)}")
    formats = entry.get("formats", list(DEFAULT_FORMATS))
    if (not isinstance(formats, list) or not formats
            or any(f not in FORMATS for f in formats)):
        raise DashboardError(f"{where}: field 'formats' {formats!r}: a list of "
                             f"{', '.join(FORMATS)}")
    out = text("out") or ""
    try:
        out.format_map({key: "x" for key in _PLACEHOLDERS})
    except (KeyError, ValueError, IndexError) as exc:
        raise DashboardError(f"{where}: field 'out' {out!r}: placeholders are "
                             f"{', '.join('{' + p + '}' for p in _PLACEHOLDERS)} ({exc})") from None
    base = path.resolve().parent
    db = Path(text("db") or "").expanduser()
    budgets = text("budgets", required=False)
    budget_path = Path(budgets).expanduser() if budgets else None
    cost_centre_label = text("cost_centre_label", required=False)
    if cost_centre_label is not None and budget_path is None:
        raise DashboardError(f"{where}: field 'cost_centre_label' needs field 'budgets' (it names the budgets' "
                             "cost centres)")
    return ScheduledReport(
        name=name, cron=cron, db=db if db.is_absolute() else base / db, out=out, period=period,
        team=text("team", required=False), run_id=text("run_id", required=False),
        formats=tuple(formats), base=base,
        budgets=None if budget_path is None else budget_path if budget_path.is_absolute() else base / budget_path,
        group_by=text("group_by", required=False),
        cost_centre_label=cost_centre_label,
    )


# --------------------------------------------------------------------------------------------
# Time
# --------------------------------------------------------------------------------------------


def latest_fire_time(cron: str, now: datetime) -> datetime:
    """The latest time at or before ``now`` (UTC, naive) when ``cron`` fires."""
    # croniter's get_prev is strictly before its start: start one second later so a runner
    # invoked exactly at the fire time sees it as due.
    start = now.replace(microsecond=0) + timedelta(seconds=1)
    return croniter(cron, start).get_prev(datetime)


def report_window(period: str, fire_time: datetime) -> tuple[date | None, date | None]:
    """The inclusive UTC days a report fired at ``fire_time`` covers: the last complete day,
    ISO week (Monday to Sunday) or calendar month before it; (None, None) for the whole run."""
    today = fire_time.date()
    if period == "day":
        day = today - timedelta(days=1)
        return day, day
    if period == "week":
        this_monday = today - timedelta(days=today.weekday())
        return this_monday - timedelta(days=7), this_monday - timedelta(days=1)
    if period == "month":
        last_day = today.replace(day=1) - timedelta(days=1)
        return last_day.replace(day=1), last_day
    if period == "run":
        return None, None
    raise DashboardError(f"unknown period {period!r}: use {', '.join(PERIODS)}")


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------


def default_state_path(config: Path) -> Path:
    """``reports.toml`` keeps its state in ``reports.state.json`` beside it."""
    config = Path(config)
    return config.with_name(f"{config.stem}.state.json")


def read_state(path: Path) -> dict[str, Any]:
    """The state file's content; an empty state when the file does not exist yet."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"version": STATE_VERSION, "reports": {}}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DashboardError(f"{path}: state file is not valid JSON ({exc}); move it away to "
                             "start afresh (every report then runs once for its latest fire "
                             "time)") from None
    if not isinstance(document, dict) or not isinstance(document.get("reports"), dict):
        raise DashboardError(f"{path}: state file has no 'reports' object")
    return document


def _write_atomically(path: Path, text: str) -> None:
    write_file(path, text)


@contextlib.contextmanager
def _locked(state_path: Path) -> Iterator[None]:
    lock_path = state_path.with_name(state_path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DashboardError(f"another `gpu-finops schedule` holds {lock_path}; nothing "
                                 "done (it will write what is due)") from None
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def output_folder(report: ScheduledReport, fire_time: datetime,
                  window: tuple[date | None, date | None]) -> Path:
    """The report's folder for one fire time, from its ``out`` template."""
    first, last = window
    values = {"name": report.name, "from": str(first or "run"), "to": str(last or "run"),
              "fire": fire_time.strftime("%Y-%m-%dT%H%M")}
    for key, value in values.items():
        if "/" in value or "\\" in value or value in (".", ".."):
            raise DashboardError(f"report {report.name!r}: {{{key}}} = {value!r} is not a "
                                 "plain folder name")
    folder = Path(report.out.format_map(values)).expanduser()
    return folder if folder.is_absolute() else report.base / folder


def _publish(report: ScheduledReport, target: Path, fire_time: datetime,
             window: tuple[date | None, date | None]) -> None:
    """Write the report into a temporary sibling folder, then rename it into place."""
    created = not target.parent.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _check_replaceable(target)
        # the report's calendar window is the selection: no run phase narrows it
        write_report(report.db, staging, window[0], window[1], report.formats,
                     run_id=report.run_id, team=report.team, phase=None, budgets=report.budgets,
                     group_by=report.group_by, cost_centre_label=report.cost_centre_label)
        with output_lock(target):
            _check_replaceable(target)  # again: files may have been put there meanwhile
            replace_folder(staging, target)  # a rerun after a lost state: the old folder or the new
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(target.parent.iterdir()):
            target.parent.rmdir()  # a failed first report leaves no empty folder behind


def _budget_note(report: ScheduledReport, window: tuple[date | None, date | None]) -> str:
    """"; over budget: a, b; trending over: c" for the outcome line (empty without budgets)."""
    if report.budgets is None:
        return ""
    over, trending = budget_status(report.db, report.run_id, report.budgets, window[1], report.cost_centre_label)
    parts = [f"over budget: {', '.join(over)}" if over else "", f"trending over: {', '.join(trending)}" if trending else ""]
    return "".join(f"; {p}" for p in parts if p) or "; every budget on track"


def _check_replaceable(target: Path) -> None:
    """Refuse to replace ``target`` unless it is missing or holds only report files: an
    ``out`` template naming a folder of the user's (no placeholder, a typo) must not delete
    it when the report is written again."""
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink() or not target.is_dir():
        raise DashboardError(f"{target}: exists and is not a report folder: not replaced")
    known = report_file_names() | {FILES_MANIFEST}
    strangers = sorted(p.name for p in target.iterdir() if p.is_symlink() or not p.is_file() or p.name not in known)
    if strangers:
        raise DashboardError(
            f"{target}: holds files a report did not write ({', '.join(strangers[:3])}"
            f"{', …' if len(strangers) > 3 else ''}): not replaced; point 'out' at a folder of its own"
        )


def run_due(config: Path, state_path: Path | None = None, now: datetime | None = None,
            dry_run: bool = False) -> list[Outcome]:
    """Run every report of ``config`` that is due at ``now`` (default: the clock, UTC) and
    record it in the state file; return what happened to each report."""
    reports = load_config(config)
    state_path = Path(state_path) if state_path else default_state_path(config)
    if now is None:
        now = datetime.now(UTC)
    if now.tzinfo is not None:  # cron expressions are read in UTC
        now = now.astimezone(UTC).replace(tzinfo=None)
    outcomes: list[Outcome] = []
    with _locked(state_path):
        state = read_state(state_path)
        recorded: dict[str, Any] = state["reports"]
        for report in reports:
            fire_time = latest_fire_time(report.cron, now)
            last = recorded.get(report.name, {}).get("last_fire_time")
            if last is not None and datetime.fromisoformat(last) >= fire_time:
                outcomes.append(Outcome(report.name, fire_time, "not due",
                                        f"already written for {fire_time:%Y-%m-%d %H:%M} UTC"))
                continue
            window = report_window(report.period, fire_time)
            try:
                folder = output_folder(report, fire_time, window)
                if dry_run:
                    outcomes.append(Outcome(report.name, fire_time, "would write",
                                            f"{folder} (due {fire_time:%Y-%m-%d %H:%M} UTC)"))
                    continue
                _publish(report, folder, fire_time, window)
            except DashboardError as exc:
                outcomes.append(Outcome(report.name, fire_time, "failed", str(exc)))
                continue
            recorded[report.name] = {
                "last_fire_time": fire_time.isoformat(),
                "written_at": now.isoformat(timespec="seconds"),
                "folder": str(folder),
                "window": [str(window[0] or "run"), str(window[1] or "run")],
            }
            # Recorded after each report, so a crash later in the loop loses nothing.
            _write_atomically(state_path, json.dumps(state, indent=2, sort_keys=True) + "\n")
            outcomes.append(Outcome(report.name, fire_time, "written",
                                    f"{folder} (due {fire_time:%Y-%m-%d %H:%M} UTC){_budget_note(report, window)}"))
    return outcomes
