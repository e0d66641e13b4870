"""The dashboard's Advice page (AppTest, headless) and the report's advice sections, on the
database `advise quotas` wrote; a database without advice shows how to get one."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboards.data import DB_ENV_VAR
from gpu_finops.cli import main

pytestmark = pytest.mark.slow
APP = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")


def _advice_page(monkeypatch, db: Path) -> AppTest:
    monkeypatch.setenv(DB_ENV_VAR, str(db))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at = at.switch_page("app_pages/advice.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_the_advice_page_shows_the_front_and_the_teams(unused, monkeypatch):
    _, out = unused
    at = _advice_page(monkeypatch, out / "gpu-finops.duckdb")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Recommended trial"] == "0"
    assert [m.delta[0] for m in at.metric if m.delta] == ["-", "-"]  # both costs fall: arrows down
    assert any("beats today's manifests by" in m.value and "95 % over 2 seeds" in m.value for m in at.markdown)
    assert len(at.get("vega_lite_chart")) == 2  # the Pareto front, a team figure
    trials = next(f.value for f in at.dataframe if "cost_of_delay" in f.value.columns and "trial" in f.value.columns)
    assert set(trials["trial"]) == {"0", "1", "2", "3", "today"}
    assert {"seeds", "total_ci95", "improvement", "improvement_ci95", "beats_today"} <= set(trials.columns)
    at = at.selectbox(key="advice.metric").select("cost_of_delay").run()
    assert not at.exception


def test_without_advice_the_page_says_how_to_get_it(unused, monkeypatch, tmp_path):
    files, out = unused
    assert main(["build", str(out / "runs" / "today"), "--prices", str(files["prices"]), "--db",
                 str(tmp_path / "plain.duckdb"), "-q"]) == 0
    at = _advice_page(monkeypatch, tmp_path / "plain.duckdb")
    assert "gpu-finops advise quotas" in at.info[0].value


def test_the_report_has_the_advice_sections(unused, tmp_path):
    _, out = unused
    assert main(["report", "--db", str(out / "gpu-finops.duckdb"), "--run-id", "advise-today", "--out",
                 str(tmp_path / "report"), "--format", "html,md,csv", "-q"]) == 0
    for name in ("advice_pareto.csv", "advice_teams.csv"):
        assert (tmp_path / "report" / name).is_file()
    assert "Advice: per team, today and recommended" in (tmp_path / "report" / "index.html").read_text()
