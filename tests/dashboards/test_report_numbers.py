"""The report writes every number one way (dashboards/cells.py): money with a thousands
separator and cents, shares as percentages, counts whole, nothing as None; its CSV files keep
raw numbers rounded to their unit, so two runs of one report write the same bytes."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from dashboards import cells
from gpu_finops.cli import main


def test_cells_by_column():
    frame = pd.DataFrame({"effective_cost": [12627.78, -3.5], "burn_pct": [0.4333, None],
                          "preemptions": [1049.0, 2.0], "gpu_hours": [1234.56, 0.04], "team": ["a", None],
                          "spend_z": [4.791, 0.5]})
    shown = cells.written(frame)
    assert shown["effective_cost"].tolist() == ["$12,627.78", "-$3.50"]
    assert shown["burn_pct"].tolist() == ["43.3%", ""]
    assert shown["preemptions"].tolist() == ["1,049", "2"]
    assert shown["gpu_hours"].tolist() == ["1,234.6", "0.0"]
    assert shown["team"].tolist() == ["a", ""]
    assert shown["spend_z"].tolist() == ["4.79", "0.50"]
    rounded = cells.csv_rounded(pd.DataFrame({"effective_cost": [0.1 + 0.2], "preemptions": [3.0],
                                              "share": [1 / 3]}))
    assert rounded.to_csv(index=False) == "effective_cost,preemptions,share\n0.3,3,0.333333\n"


@pytest.mark.slow
def test_the_demo_report_writes_numbers_one_way(demo_db, tmp_path):
    budgets = demo_db.parent / "inputs" / "budgets.csv"
    for name in ("first", "second"):
        assert main(["report", "--db", str(demo_db), "--out", str(tmp_path / name), "--format", "html,md,csv",
                     "--run-id", "demo-gang-v1.37", "--budgets", str(budgets), "-q"]) == 0
    html = (tmp_path / "first" / "index.html").read_text()
    cells_html = re.findall(r"<td>(.*?)</td>", html)
    assert cells_html and not [c for c in cells_html if c in ("None", "nan", "NaN")]
    assert not re.search(r"<td>\$\d{4,}\.\d\d</td>", html), "money without a thousands separator"
    markdown = (tmp_path / "first" / "report.md").read_text()
    burn = [line for line in markdown.splitlines() if line.startswith("| ") and "%" in line]
    assert burn, "the budget burn shows its percentages"
    first = sorted((tmp_path / "first").glob("*.csv"))
    assert first
    for path in first:
        assert path.read_bytes() == (tmp_path / "second" / path.name).read_bytes(), path.name
        for line in path.read_text().splitlines()[1:]:
            assert not re.search(r"\d\.\d{7,}", line), (path.name, line)


def test_every_report_table_scrolls_inside_the_page(fixture_db, tmp_path):
    assert main(["report", "--db", str(fixture_db), "--out", str(tmp_path / "r"), "--format", "html", "-q"]) == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert page.count("<table") == page.count('<div class="table"><table') > 0
    assert ".table{overflow-x:auto" in page
