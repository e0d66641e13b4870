"""The batch report on the demo's own database shows no internal name: not the platform line's
``__idle__`` (it is "Unallocated (idle)", in the CSV files too), not a mart's snake_case column
or value, and waits in human units. The only snake_case words left are those of the
scheduler's own messages the report quotes ("min_count 16")."""

from __future__ import annotations

import csv
import html
import re

import pytest

from dashboards import data, labels
from dashboards.report import write_report

pytestmark = pytest.mark.slow

SNAKE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")


@pytest.fixture(scope="module")
def report(demo_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    write_report(demo_db, out, formats=("html", "md", "csv"))
    return out


def _quoted_messages(report) -> set[str]:
    """snake_case words of the scheduler's messages (quoted as they are, kube-scheduler's words)."""
    words: set[str] = set()
    for path in report.glob("*.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                for column in ("latest_message", "message"):
                    words |= set(SNAKE.findall(row.get(column) or ""))
    return words


def test_the_report_names_nothing_internal(report):
    markdown = (report / "report.md").read_text(encoding="utf-8").replace("\\_", "_")
    page = html.unescape(re.sub(r"<[^>]+>", " ", (report / "index.html").read_text(encoding="utf-8")))
    quoted = _quoted_messages(report)
    for name, text in (("report.md", markdown), ("index.html", page)):
        assert data.IDLE_TENANT not in text, name
        assert not set(SNAKE.findall(text)) - quoted, (name, sorted(set(SNAKE.findall(text)) - quoted))
    assert "Wait from submission to the first running pod." in markdown
    assert re.search(r"\| P95 wait \|", markdown) and re.search(r"\| \d+(\.\d)? h \|", markdown)
    for path in report.glob("*.csv"):
        assert data.IDLE_TENANT not in path.read_text(encoding="utf-8"), path.name


def test_csv_files_name_the_platform_line_and_keep_the_marts_columns(demo_db):
    con = data.connect_read_only(demo_db)
    try:
        showback = data.team_showback(con, data.with_phase(con, data.Filters(data.list_runs(con)["run_id"].iloc[0]),
                                                           data.DEFAULT_PHASE), "separate", False)
    finally:
        con.close()
    assert data.IDLE_TENANT in set(showback["tenant"])  # the marts keep their key
    written = labels.csv_frame(showback)
    assert list(written.columns) == list(showback.columns)
    assert labels.PLATFORM_LINE in set(written["tenant"]) and data.IDLE_TENANT not in set(written["tenant"])
