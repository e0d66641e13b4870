"""`gpu-finops schedule`: cron-driven reports, each fire time written once, atomically."""

from __future__ import annotations

import json
import os
from datetime import date, datetime
from pathlib import Path

import pytest

from dashboards import schedule
from dashboards.errors import DashboardError
from gpu_finops.cli import main

CONFIG = """
[[report]]
name = "daily"
cron = "0 6 * * *"
db = "{db}"
out = "reports/{{name}}/{{from}}"
period = "day"
run_id = "demo-a"
formats = ["csv"]

[[report]]
name = "weekly-obrien"
cron = "30 7 * * MON"
db = "{db}"
out = "reports/{{name}}/{{from}}_{{to}}"
period = "week"
team = "team-o'brien"
run_id = "demo-a"
formats = ["md"]
"""


@pytest.fixture
def config(tmp_path: Path, fixture_db: Path) -> Path:
    path = tmp_path / "reports.toml"
    path.write_text(CONFIG.format(db=fixture_db), encoding="utf-8")
    return path


def _statuses(outcomes) -> dict[str, str]:
    return {o.name: o.status for o in outcomes}


def test_a_due_report_runs_exactly_once_across_two_invocations(config, tmp_path):
    at_0700 = datetime(2026, 11, 3, 7, 0)
    first = schedule.run_due(config, now=at_0700)
    assert _statuses(first) == {"daily": "written", "weekly-obrien": "written"}
    folder = tmp_path / "reports" / "daily" / "2026-11-02"  # the day before 2026-11-03 06:00
    assert {"costliest_workloads.csv", "headline.csv"} <= {p.name for p in folder.iterdir()}
    written = {p: p.stat().st_mtime_ns for p in folder.iterdir()}

    second = schedule.run_due(config, now=datetime(2026, 11, 3, 23, 59))
    assert _statuses(second) == {"daily": "not due", "weekly-obrien": "not due"}
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir()} == written  # untouched
    state = json.loads((tmp_path / "reports.state.json").read_text())
    assert state["reports"]["daily"]["last_fire_time"] == "2026-11-03T06:00:00"
    assert state["reports"]["weekly-obrien"]["window"] == ["2026-10-26", "2026-11-01"]

    third = schedule.run_due(config, now=datetime(2026, 11, 4, 6, 0))  # exactly at a fire time
    assert _statuses(third) == {"daily": "written", "weekly-obrien": "not due"}
    assert (tmp_path / "reports" / "daily" / "2026-11-03" / "headline.csv").is_file()
    # nothing half-written anywhere: no temporary folder or state file left behind
    # (each report folder lists what gpu-finops wrote in it, so a rerun replaces only that)
    leftovers = [p for p in tmp_path.rglob(".*") if p.name not in ("reports.state.json.lock", ".gpu-finops-files.json")]
    assert leftovers == []


def test_missed_fire_times_are_caught_up_once(config, tmp_path):
    outcomes = schedule.run_due(config, now=datetime(2026, 11, 20, 12, 0))  # ran 2 weeks ago
    assert {o.name: o.fire_time for o in outcomes} == {
        "daily": datetime(2026, 11, 20, 6, 0), "weekly-obrien": datetime(2026, 11, 16, 7, 30)}
    assert sorted(p.name for p in (tmp_path / "reports" / "daily").iterdir()) == ["2026-11-19"]


def test_team_and_period_reach_the_report(config, tmp_path):
    schedule.run_due(config, now=datetime(2026, 11, 9, 8, 0))
    text = (tmp_path / "reports" / "weekly-obrien" / "2026-11-02_2026-11-08" / "report.md"
            ).read_text(encoding="utf-8")
    assert "run demo-a, whole run, 2026-11-02 00:00 to 2026-11-04 00:00 UTC, team-o'brien" in text
    assert "- **Total cost**: $32.00" in text  # the team's partially placed gang only


def test_a_scheduled_report_groups_by_a_label(tmp_path, fixture_db):
    path = tmp_path / "reports.toml"
    path.write_text(f"""[[report]]
name = "by-cost-center"
cron = "0 6 * * *"
db = "{fixture_db}"
out = "reports/{{name}}"
period = "run"
run_id = "demo-a"
formats = ["csv"]
group_by = "label:cost-center"
""", encoding="utf-8")
    assert _statuses(schedule.run_due(path, now=datetime(2026, 11, 9, 8, 0))) == {"by-cost-center": "written"}
    table = (tmp_path / "reports" / "by-cost-center" / "chargeback_by_label.csv").read_text(encoding="utf-8")
    assert "Unlabelled" in table and "__unallocated__" not in table


def test_a_failed_report_is_retried_next_time(config, tmp_path, fixture_db):
    broken = config.read_text().replace('team = "team-o\'brien"', 'team = "nobody"')
    config.write_text(broken)
    outcomes = schedule.run_due(config, now=datetime(2026, 11, 9, 8, 0))
    assert _statuses(outcomes) == {"daily": "written", "weekly-obrien": "failed"}
    assert "team 'nobody' has no workloads" in outcomes[1].detail
    assert not (tmp_path / "reports" / "weekly-obrien").exists()
    config.write_text(broken.replace('"nobody"', '"platform"'))
    assert _statuses(schedule.run_due(config, now=datetime(2026, 11, 9, 9, 0))) == {
        "daily": "not due", "weekly-obrien": "written"}


def test_report_windows():
    fire = datetime(2026, 11, 4, 6, 0)  # a Wednesday
    assert schedule.report_window("day", fire) == (date(2026, 11, 3), date(2026, 11, 3))
    assert schedule.report_window("week", fire) == (date(2026, 10, 26), date(2026, 11, 1))
    assert schedule.report_window("month", fire) == (date(2026, 10, 1), date(2026, 10, 31))
    assert schedule.report_window("month", datetime(2027, 1, 1)) == (date(2026, 12, 1),
                                                                     date(2026, 12, 31))
    assert schedule.report_window("run", fire) == (None, None)
    assert schedule.latest_fire_time("0 6 * * *", datetime(2026, 11, 4, 5, 59)) == datetime(
        2026, 11, 3, 6, 0)


@pytest.mark.parametrize(("entry", "message"), [
    ('name = "x"\ncron = "61 * * * *"\ndb = "d"\nout = "o"', "field 'cron'"),
    ('name = "x"\ncron = "0 6 * * *"\ndb = "d"', "field 'out' is required"),
    ('name = "x"\ncron = "0 6 * * *"\ndb = "d"\nout = "o"\nperiod = "year"', "field 'period'"),
    ('name = "x"\ncron = "0 6 * * *"\ndb = "d"\nout = "{nope}"', "placeholders"),
    ('name = "x"\ncron = "0 6 * * *"\ndb = "d"\nout = "o"\nformats = ["pdf"]', "field 'formats'"),
    ('name = "x"\ncron = "0 6 * * *"\ndb = "d"\nout = "o"\nwhen = "daily"', "unknown field"),
])
def test_bad_reports_files_name_the_report_and_field(tmp_path, entry, message):
    path = tmp_path / "reports.toml"
    path.write_text(f"[[report]]\n{entry}\n", encoding="utf-8")
    with pytest.raises(DashboardError, match=message) as raised:
        schedule.load_config(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_the_schedule_command(config, tmp_path, capsys):
    state = tmp_path / "elsewhere" / "state.json"
    args = ["schedule", "--config", str(config), "--state", str(state)]
    assert main([*args, "--now", "2026-11-03T07:00:00Z", "--dry-run"]) == 0
    assert "daily: would write" in capsys.readouterr().out
    assert not state.exists() and not (tmp_path / "reports").exists()
    assert main([*args, "--now", "2026-11-03T07:00:00Z"]) == 0
    out = capsys.readouterr().out
    assert "daily: written:" in out and "weekly-obrien: written:" in out
    assert main([*args, "--now", "2026-11-03T07:05:00+00:00"]) == 0
    assert "daily: not due: already written for 2026-11-03 06:00 UTC" in capsys.readouterr().out
    assert main(["schedule", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "reports file not found" in capsys.readouterr().err


def test_an_overlapping_invocation_is_refused(config, tmp_path):
    import fcntl

    state = schedule.default_state_path(config)
    with open(state.with_name(state.name + ".lock"), "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(DashboardError, match="another `gpu-finops schedule`"):
            schedule.run_due(config, now=datetime(2026, 11, 3, 7, 0))
    assert not (tmp_path / "reports").exists()


def test_a_corrupt_state_file_is_a_clear_error(config):
    schedule.default_state_path(config).write_text("{not json")
    with pytest.raises(DashboardError, match="not valid JSON"):
        schedule.run_due(config, now=datetime(2026, 11, 3, 7, 0))


def test_a_rerun_replaces_the_folder_whole(config, tmp_path):
    schedule.run_due(config, now=datetime(2026, 11, 3, 7, 0))
    folder = tmp_path / "reports" / "daily" / "2026-11-02"
    (folder / "spend_by_team.png").write_bytes(b"an older report's chart")  # a report file
    os.remove(schedule.default_state_path(config))  # state lost: the report runs again
    assert _statuses(schedule.run_due(config, now=datetime(2026, 11, 3, 8, 0)))["daily"] == "written"
    assert not (folder / "spend_by_team.png").exists() and (folder / "headline.csv").is_file()


def test_a_rerun_never_replaces_a_folder_holding_the_users_files(config, tmp_path):
    schedule.run_due(config, now=datetime(2026, 11, 3, 7, 0))
    folder = tmp_path / "reports" / "daily" / "2026-11-02"
    (folder / "notes.txt").write_text("mine")  # not a file a report writes: the folder is the user's now
    os.remove(schedule.default_state_path(config))
    assert _statuses(schedule.run_due(config, now=datetime(2026, 11, 3, 8, 0)))["daily"] == "failed"
    assert (folder / "notes.txt").read_text() == "mine"
