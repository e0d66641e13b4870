"""Batch report: self-contained HTML, CSV tables, Markdown; safe CSVs and safe paths."""

from __future__ import annotations

import csv
import html
import re
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from dashboards.errors import DashboardError
from dashboards.report import (
    neutralise_csv_frame,
    neutralise_csv_value,
    safe_output_path,
    write_report,
)


@pytest.fixture(scope="module")
def report_dir(fixture_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    out = tmp_path_factory.mktemp("report")
    written = write_report(fixture_db, out, formats=("html", "csv", "md"), run_id="demo-a")
    return out, written


def test_files_exist_and_nothing_half_written_remains(report_dir):
    out, written = report_dir
    names = {p.name for p in written}
    assert {"index.html", "report.md", "headline.csv", "spend_by_team.csv",
            "usage_class_over_time.csv", "idle_cost_by_cause.csv",
            "costliest_workloads.csv"} <= names
    assert all(p.is_file() and p.parent == out.resolve() for p in written)
    # no temp folder left: the report files and the list of what gpu-finops wrote there
    assert sorted(p.name for p in out.iterdir()) == sorted({*names, ".gpu-finops-files.json"})


def test_html_is_self_contained_with_embedded_charts(report_dir):
    out, _ = report_dir
    page = (out / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page, re.IGNORECASE)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower()
    charts = re.findall(r'<img class="chart"[^>]*src="data:image/svg\+xml;base64,', page)
    # scenarios ranked and runs side by side (the fixture holds two runs), spend, usage over
    # time, chargeback, idle by cause, avoidable or sunk, unservable demand, cost of waiting,
    # checkpoint loss, costliest preemption chains, cost per training run, costliest, pending
    assert len(charts) == 14
    for heading in ("Spend by team", "GPU-hours by usage class", "Idle and partial-placement",
                    "Costliest workloads", "Chargeback per team", "Unservable demand",
                    "GPU-hours demanded while pending", "Checkpoint loss per eviction", "Cost per training run",
                    "Commitment pools", "Effective savings rate", "Costliest preemption chains"):
        assert heading in page
    # the report names the costliest chains: the fixture's one, gang-2's preemption of =SUM(A1)
    assert ("The costliest: chain 13, started by gang-2 (priority 0): 1 pod preempted (0 in the cascade), "
            "1 level deep, 4.0 GPU-hours lost ($8.00).") in html.unescape(page)
    assert "<th>Origin preemptor</th>" in page and "<th>Of them in the cascade</th>" in page
    assert "$1,536.00" in page  # total cost headline
    assert "Partial placement (gang wait)" in page and "gang_wait" not in page
    assert "<td>team-o'brien</td>" in page


def test_csv_formula_cells_are_neutralised(report_dir):
    out, _ = report_dir
    with open(out / "costliest_workloads.csv", newline="", encoding="utf-8") as handle:
        ids = [row["workload_id"] for row in csv.DictReader(handle)]
    assert "'=SUM(A1)" in ids and "=SUM(A1)" not in ids
    for value in ("=1+1", "+cmd", "-2+3", "@SUM(A1)"):
        assert neutralise_csv_value(value) == "'" + value
    assert neutralise_csv_value("train-1") == "train-1"
    assert neutralise_csv_value(-3.5) == -3.5  # a negative number is data
    import pandas as pd

    frame = neutralise_csv_frame(pd.DataFrame({"a": ["=x", "ok"], "b": [-1, 2]}))
    assert frame["a"].tolist() == ["'=x", "ok"] and frame["b"].tolist() == [-1, 2]


def test_markdown_report(report_dir):
    out, _ = report_dir
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# GPU cost report")
    assert "## Spend by team" in text and "| Team |" in text


def test_path_escape_is_refused(tmp_path):
    for name in ("../evil.csv", "/etc/passwd", "a/b.csv", "..", ""):
        with pytest.raises(DashboardError):
            safe_output_path(tmp_path, name)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "link.csv").symlink_to(outside)  # a planted link that would write outside
    with pytest.raises(DashboardError):
        safe_output_path(out, "link.csv")
    assert safe_output_path(out, "ok.csv") == out.resolve() / "ok.csv"


def test_planted_symlink_at_a_report_name_is_not_followed(fixture_db, tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "spend_by_team.csv").symlink_to(outside)
    with pytest.raises(DashboardError):
        write_report(fixture_db, out, formats=("csv",), run_id="demo-a")
    assert outside.read_text() == "keep me"


def test_date_window_and_errors(fixture_db, tmp_path):
    written = write_report(fixture_db, tmp_path / "day2", date(2026, 11, 3), date(2026, 11, 3),
                           formats=("csv",), run_id="demo-a")
    headline = (tmp_path / "day2" / "headline.csv").read_text()
    assert "$720.00" in headline  # idle cost on day 2 only: no_demand
    assert all(p.suffix == ".csv" for p in written)
    with pytest.raises(DashboardError, match="unknown report format"):
        write_report(fixture_db, tmp_path / "x", formats=("pdf",))
    with pytest.raises(DashboardError, match="not in"):
        write_report(fixture_db, tmp_path / "x", run_id="nope")
    with pytest.raises(DashboardError, match="after"):
        write_report(fixture_db, tmp_path / "x", date(2026, 11, 3), date(2026, 11, 2))
    with pytest.raises(DashboardError, match="not found"):
        write_report(tmp_path / "missing.duckdb", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_latest_run_is_the_default_and_png_charts(fixture_db, tmp_path):
    written = write_report(fixture_db, tmp_path, formats=("html", "png"))
    assert "demo-b" in (tmp_path / "index.html").read_text()
    pngs = [p for p in written if p.suffix == ".png"]
    assert pngs and all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)


def test_one_teams_report_from_the_command_line(fixture_db, tmp_path, capsys):
    from gpu_finops.cli import main

    out = tmp_path / "obrien"
    assert main(["report", "--db", str(fixture_db), "--out", str(out), "--format", "md",
                 "--run-id", "demo-a", "--team", "team-o'brien", "--from", "2026-11-02",
                 "--to", "2026-11-02"]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    # the steady phase by default (demo-a is steady throughout)
    assert "run demo-a, steady phase, 2026-11-02 00:00 to 2026-11-03 00:00 UTC, team-o'brien" in text
    assert "- **Total cost**: $32.00" in text
    assert "| ml-research |" not in text.split("## Spend by team")[1].split("##")[0]
    assert main(["report", "--db", str(fixture_db), "--out", str(tmp_path / "x"),
                 "--run-id", "demo-a", "--team", "nobody"]) == 2
    assert "team 'nobody' has no workloads in run demo-a" in capsys.readouterr().err


def test_reports_default_to_the_steady_phase_with_a_switch(fixture_db, tmp_path):
    from gpu_finops.cli import main

    totals = {}
    for phase in ("steady", "drain", "all"):
        out = tmp_path / phase
        assert main(["report", "--db", str(fixture_db), "--out", str(out), "--format", "md",
                     "--run-id", "demo-b", "--phase", phase]) == 0
        text = (out / "report.md").read_text(encoding="utf-8")
        totals[phase] = text.split("- **Total cost**: ")[1].split("\n")[0]
        assert (f"{phase} phase" in text) == (phase != "all")
    # demo-b: b-1 runs hours 0-12 (8 H100 GPUs at $3 and 32 cores at $0.01), then 12 idle hours
    assert totals == {"steady": "$291.84", "drain": "$288.00", "all": "$579.84"}
    default = tmp_path / "default"
    write_report(fixture_db, default, formats=("md",), run_id="demo-b")
    assert "steady phase" in (default / "report.md").read_text(encoding="utf-8")


def test_group_by_a_label_adds_the_chargeback_by_its_values(fixture_db, tmp_path):
    write_report(fixture_db, tmp_path / "by-label", formats=("csv", "md"), run_id="demo-a",
                 group_by="label:cost-center")
    table = pd.read_csv(tmp_path / "by-label" / "chargeback_by_label.csv")
    by_team = pd.read_csv(tmp_path / "by-label" / "chargeback.csv")
    # the groups in words (never the marts' names) and the same total as per team
    assert set(table["cost-center"]) == {"cc-research", "cc-platform", "Unlabelled", "Unallocated (idle)"}
    assert table["charged_cost"].sum() == pytest.approx(by_team["charged_cost"].sum())
    assert "Chargeback per cost-center" in (tmp_path / "by-label" / "report.md").read_text()
    without = write_report(fixture_db, tmp_path / "plain", formats=("csv",), run_id="demo-a")
    assert not any(p.name == "chargeback_by_label.csv" for p in without)
    with pytest.raises(DashboardError, match="carries the label 'owner'"):
        write_report(fixture_db, tmp_path / "x", run_id="demo-a", group_by="label:owner")
    with pytest.raises(DashboardError, match="use team or label"):
        write_report(fixture_db, tmp_path / "x", run_id="demo-a", group_by="cost-center")
    assert not (tmp_path / "x").exists()


def test_every_section_names_its_window(report_dir):
    # the report is headed with its selection (steady phase by default); a section over other
    # hours (whole run, billing months) says so above its table
    out, _ = report_dir
    page = (out / "index.html").read_text(encoding="utf-8")
    windows = dict(re.findall(r'<h2 id="([a-z_]+)">.*?</h2>\n<p class="window">Window: ([^<]*)</p>', page))
    headings = re.findall(r'<h2 id="([a-z_]+)">', page)
    assert headings and set(headings) == set(windows), set(headings) - set(windows)
    selection = "the report&#x27;s selection: steady phase, 2026-11-02 00:00 to 2026-11-04 00:00 UTC"
    for slug in ("spend_by_team", "chargeback", "idle_cost_by_cause", "cost_per_training_run", "pending_workloads"):
        assert windows[slug] == selection, slug
    for slug in ("runs_compared", "runs_waits"):
        assert windows[slug].startswith("the whole run"), slug
    assert "billing months" in windows["commitment_pools"]
    assert "every run of the database covers" in windows["scenario_ranking"]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.count("_Window: ") == len(headings)


def test_no_missing_value_is_shown_as_none(report_dir):
    out, _ = report_dir
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<td>None</td>" not in page and "&lt;NA&gt;" not in page and "<td>NaT</td>" not in page
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "| None |" not in markdown and "<NA>" not in markdown


def test_the_headline_names_both_esr_bases(report_dir):
    # the FinOps Foundation's ESROverList and ESROverContract, each named with its formula
    out, _ = report_dir
    headline = pd.read_csv(out / "headline.csv").set_index("metric")["value"]
    over_list = next(v for k, v in headline.items() if k.startswith("Effective savings rate over list (ESROverList"))
    over_contract = next(v for k, v in headline.items()
                         if k.startswith("Effective savings rate over contract (ESROverContract"))
    # the fixture has no negotiated rate (contracted = list): the commitment is the whole saving
    assert over_list == over_contract and over_list.endswith("%")
    assert "ESROverList" in (out / "index.html").read_text(encoding="utf-8")
