"""Budgets and burn: spend to date, the forecast and its interval, status, and anomalous days,
on daily figures written in the test (hand-computed) and on replays built in the test
(`report --budgets`, and a scheduled report naming the teams over budget); on a labelled
replay, the cost centres of the cost-center pod label (hand-computed spend, forecast, flags)."""

from __future__ import annotations

import math
import re
from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from dashboards.budgets import (
    CentreSpend,
    anomalies,
    burn,
    check_cost_centres,
    forecast_interval,
    read_budgets,
    steady_days,
    student_t_quantile,
    teams_to_name,
)
from dashboards.errors import DashboardError
from gpu_finops.cli import main

BUDGETS = """team,cost_centre,month,budget_usd
a,research,2026-11,3000
b,research,2026-11,2000
c,,2026-11,200
,research,2026-11,5000
"""


def _daily() -> pd.DataFrame:
    rows = []
    for day in range(1, 11):
        spend_a = 400.0 if day == 7 else 100.0  # a spike on the 7th, its idle share unchanged
        idle_a = 60.0 if day == 8 else spend_a / 10  # an idle spike on the 8th
        rows += [("a", date(2026, 11, day), spend_a, idle_a), ("b", date(2026, 11, day), 50.0, 5.0),
                 ("c", date(2026, 11, day), 50.0, 5.0)]
    return pd.DataFrame(rows, columns=["team", "day", "spend", "idle_cost"])


def test_burn_forecast_interval_and_status(tmp_path):
    (tmp_path / "budgets.csv").write_text(BUDGETS)
    table = burn(_daily(), read_budgets(tmp_path / "budgets.csv"), date(2026, 11, 10)).set_index("name")
    a = table.loc["a"]
    # 9 x 100 + 400 = 1300 in 10 days; mean 130, 20 days left: 1300 + 2600 = 3900 > 3000.
    # Sample sd: sqrt((9 x 30² + 270²) / 9) = sqrt(9000); half-width t(0.975, 9) x sd x sqrt(20 + 20²/10)
    # (t(0.975, 9) = 2.2621571628 from the tables), the mean estimated from the 10 days.
    half = 2.2621571628 * math.sqrt(9000) * math.sqrt(20 + 20 ** 2 / 10)
    assert (a["spend_to_date"], a["days_elapsed"], a["days_in_month"], a["forecast"]) == (1300.0, 10, 30, 3900.0)
    assert (a["forecast_low"], a["forecast_high"]) == (round(3900 - half, 2), round(3900 + half, 2))
    assert a["status"] == "trending over" and a["burn_pct"] == round(1300 / 3000, 4)
    assert (table.loc["b", "forecast"], table.loc["b", "status"]) == (1500.0, "within")  # 50/day, sd 0
    assert (table.loc["c", "spend_to_date"], table.loc["c", "status"]) == (500.0, "over")
    research = table.loc["research"]  # a + b: 1800 to date, 180 a day
    assert (research["scope"], research["spend_to_date"], research["forecast"], research["status"]) == \
        ("cost_centre", 1800.0, 5400.0, "trending over")
    assert research["basis"] == "teams" and a["basis"] == "team"  # no label carries cost centres here


def test_the_month_so_far_counts_days_with_records_but_no_spend_as_zero():
    # the run has records on the 1st to the 3rd; team a spent only on the 1st: two $0 days
    daily = pd.DataFrame([("a", date(2026, 11, 1), 300.0, 0.0)], columns=["team", "day", "spend", "idle_cost"])
    budgets = pd.DataFrame([{"team": "a", "cost_centre": None, "month": date(2026, 11, 1), "budget_usd": 1000.0}])
    row = burn(daily, budgets, date(2026, 11, 3), run_days=(date(2026, 11, 1), date(2026, 11, 5))).iloc[0]
    assert (row["spend_to_date"], row["days_elapsed"], row["days_observed"], row["forecast"]) == \
        (300.0, 3, 3, 300.0 + 27 * 100.0)


@pytest.mark.parametrize(("run_days", "observed", "forecast", "half"), [
    # the run starts on the 8th: days 1-7 have no records and are not $0 days. Observed 8-10:
    # 100, 200, 300 (mean 200, s 100), 20 days left: 600 + 20 x 200; t(0.975, 2) = 4.3026527297
    ((date(2026, 11, 8), date(2026, 11, 30)), 3, 600.0 + 20 * 200.0, 4.3026527297 * 100 * math.sqrt(20 + 400 / 3)),
    # the same days counted from the 1st (every day of the month with records): 7 days at $0
    # drag the run rate to 60 a day: mean 60, s = sqrt((7 x 60² + 40² + 140² + 240²) / 9) = sqrt(104000 / 9)
    ((date(2026, 11, 1), date(2026, 11, 30)), 10, 600.0 + 20 * 60.0,
     2.2621571628 * math.sqrt(104000 / 9) * math.sqrt(20 + 40)),
])
def test_the_run_rate_counts_only_days_with_cost_records(run_days, observed, forecast, half):
    daily = pd.DataFrame([("a", date(2026, 11, d), spend, 0.0) for d, spend in ((8, 100.0), (9, 200.0), (10, 300.0))],
                         columns=["team", "day", "spend", "idle_cost"])
    budgets = pd.DataFrame([{"team": "a", "cost_centre": None, "month": date(2026, 11, 1), "budget_usd": 1e6}])
    row = burn(daily, budgets, date(2026, 11, 10), run_days=run_days).iloc[0]
    assert (row["spend_to_date"], row["days_observed"], row["forecast"]) == (600.0, observed, round(forecast, 2))
    assert (row["forecast_low"], row["forecast_high"]) == (round(max(600.0, forecast - half), 2),
                                                           round(forecast + half, 2))
    # without run_days, the days of the spend table: the 8th to the 10th
    assert burn(daily, budgets, date(2026, 11, 10)).iloc[0]["days_observed"] == 3


@pytest.mark.parametrize(("dof", "quantile"), [
    # Student's t, 97.5 % (the statistical tables' values)
    (1, 12.7062047), (2, 4.3026527), (4, 2.7764451), (9, 2.2621572), (29, 2.0452296), (120, 1.9799304),
])
def test_the_t_quantile(dof, quantile):
    assert student_t_quantile(0.975, dof) == pytest.approx(quantile, abs=5e-8)


def test_one_observed_day_gives_no_interval():
    assert forecast_interval(np.array([100.0]), 10)[0] == 100.0
    assert math.isnan(forecast_interval(np.array([100.0]), 10)[1])
    assert forecast_interval(np.array([100.0]), 0) == (100.0, 0.0)  # the month is over: nothing to predict


def test_anomalous_days_by_team():
    flagged = anomalies(_daily())
    assert flagged[["scope", "name", "day", "flag"]].values.tolist() == [
        ["team", "a", date(2026, 11, 7), "spend high"],  # 400 against six days of exactly 100 before it
        ["team", "a", date(2026, 11, 8), "idle high"],   # idle share 0.6 against 0.1 on the days before
    ]
    assert anomalies(_daily()[_daily()["day"] < date(2026, 11, 5)]).empty  # no day has 4 days before it


def test_a_day_is_judged_against_earlier_days_of_the_steady_phase_only():
    # the 7th's spike is in the drain: neither judged nor a baseline for the days after it
    assert anomalies(_daily(), steady=(date(2026, 11, 1), date(2026, 11, 6))).empty
    # a team whose spend doubles on the 6th and stays there: the 6th stands out from the days
    # before it; judged against every day of the run (later ones too), nothing stood out
    rows = [("a", date(2026, 11, d), 100.0 if d < 6 else 200.0, 10.0 if d < 6 else 20.0) for d in range(1, 11)]
    flagged = anomalies(pd.DataFrame(rows, columns=["team", "day", "spend", "idle_cost"]))
    assert flagged[["day", "flag"]].values.tolist()[0] == [date(2026, 11, 6), "spend high"]
    # the steady phase's whole days: from 16:00 on the 2nd to 00:00 on the 9th, the 3rd to the 8th
    from datetime import datetime
    phases = {"steady": (datetime(2026, 11, 2, 16), datetime(2026, 11, 9))}
    assert steady_days(phases) == (date(2026, 11, 3), date(2026, 11, 8))
    assert steady_days({}) is None


@pytest.mark.parametrize(("text", "message"), [
    ("team,month,budget_usd\na,2026-13,10\n", "row 2, field 'month'"),
    ("team,month,budget_usd\na,2026-11,-1\n", "row 2, field 'budget_usd'"),
    ("team,month,budget_usd\n,2026-11,5\n", "give a team or a cost_centre"),
    ("team,budget_usd\na,5\n", "missing column(s) month"),
    ("team,month,budget_usd\na,2026-11,5\na,2026-11,6\n", "a has two budgets for 2026-11"),
    # an unquoted thousands separator makes one field more: never read as $5
    ("team,cost_centre,month,budget_usd\nalpha,,2026-11,5,000\n", "row 2: 5 fields, the header has 4"),
    ("team,cost_centre,month,budget_usd\nalpha,,2026-11\n", "row 2: 3 fields, the header has 4"),
    ("team,month,budget_usd\na,2026-11,nan\n", "row 2, field 'budget_usd'"),
    ("team,month,budget_usd\na,2026-11,inf\n", "row 2, field 'budget_usd'"),
    ("team,month,budget_usd\na,2026-11,1e400\n", "row 2, field 'budget_usd'"),
    ("team,month,budget_usd\na,2026-11,5_000\n", "row 2, field 'budget_usd'"),
    ("team,month,budget_usd\na,2026-11,$5000\n", "row 2, field 'budget_usd'"),
    ("team,month,budget_usd\na,2026-+1,5\n", "row 2, field 'month'"),
    ("team,month,budget_usd\na,\uff12\uff10\uff12\uff16-11,5\n", "row 2, field 'month'"),  # full-width digits
    ("team,month,budget_usd\nalpha\u200b,2026-11,5\n", "row 2, field 'team': 'alpha\\u200b' has an invisible"),
    ("team,month,month,budget_usd\na,2026-11,2026-12,5\n", "column 'month' appears twice"),
])
def test_bad_budget_files_name_the_row_and_field(tmp_path, text, message):
    (tmp_path / "budgets.csv").write_text(text)
    with pytest.raises(DashboardError, match=re.escape(message)):
        read_budgets(tmp_path / "budgets.csv")


def test_a_budgets_file_that_is_not_utf8_is_one_line(tmp_path):
    (tmp_path / "budgets.csv").write_bytes(b"team,month,budget_usd\n\xff,2026-11,5\n")
    with pytest.raises(DashboardError, match=r"budgets.csv: not UTF-8 text \(byte 22\)"):
        read_budgets(tmp_path / "budgets.csv")


@pytest.mark.parametrize("value", ["true", '"5,000"', "nan", "-inf", "1" + "0" * 400])
def test_a_toml_budget_that_is_not_a_number(tmp_path, value):
    (tmp_path / "budgets.toml").write_text(f'[[budget]]\nteam = "a"\nmonth = "2026-11"\nbudget_usd = {value}\n')
    with pytest.raises(DashboardError, match=r"budget\[0\], field 'budget_usd'"):
        read_budgets(tmp_path / "budgets.toml")


def test_a_budgets_toml_nested_too_deeply_is_one_line(tmp_path):
    (tmp_path / "budgets.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(DashboardError, match="budgets.toml: not valid TOML: arrays or tables nested too deeply"):
        read_budgets(tmp_path / "budgets.toml")


def test_a_toml_integer_too_long_for_python_is_one_line(tmp_path):
    (tmp_path / "budgets.toml").write_text('[[budget]]\nteam = "a"\nmonth = "2026-11"\nbudget_usd = ' + "1" * 5000 + "\n")
    with pytest.raises(DashboardError, match=r"budgets.toml: not valid TOML: a value cannot be read \(Exceeds the limit \(4300 digits\)"):
        read_budgets(tmp_path / "budgets.toml")


def test_a_toml_budgets_file(tmp_path):
    (tmp_path / "budgets.toml").write_text('[[budget]]\nteam = "a"\nmonth = "2026-11"\nbudget_usd = 3000\n')
    assert read_budgets(tmp_path / "budgets.toml").to_dict("records") == [
        {"team": "a", "cost_centre": None, "month": date(2026, 11, 1), "budget_usd": 3000.0}]


def budgets_page(folder, monkeypatch, budgets=True):
    """The Budgets page run in-process over ``folder``'s db.duckdb (and budgets.csv)."""
    from streamlit.testing.v1 import AppTest

    from dashboards.budgets import BUDGETS_ENV_VAR
    from dashboards.data import DB_ENV_VAR

    app = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")
    monkeypatch.setenv(DB_ENV_VAR, str(folder / "db.duckdb"))
    if budgets:
        monkeypatch.setenv(BUDGETS_ENV_VAR, str(folder / "budgets.csv"))
    else:
        monkeypatch.delenv(BUDGETS_ENV_VAR, raising=False)
    return AppTest.from_file(app, default_timeout=60).run().switch_page("app_pages/budgets.py").run()


def schedule_config(tmp_path, folder, name, cron, period, out, **extra):
    """A one-report schedule TOML over ``folder``'s db.duckdb and budgets.csv; its path."""
    lines = [f'{key} = "{value}"' for key, value in extra.items()]
    config = tmp_path / "reports.toml"
    config.write_text("\n".join([
        "[[report]]", f'name = "{name}"', f'cron = "{cron}"', f'db = "{folder / "db.duckdb"}"', f'out = "{out}"',
        f'period = "{period}"', f'budgets = "{folder / "budgets.csv"}"', *lines]) + "\n")
    return config


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A replay of a trace written here: team a holds 4 GPUs for 6 days, team b 1 GPU."""
    folder = tmp_path_factory.mktemp("budgets")
    (folder / "cluster.csv").write_text("node,gpu_model,gpus\nn0,A100,8\n")
    (folder / "prices.csv").write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\nA100,3,2,1\n")
    rows = ["workload_id,submit_time,duration_s,pods,gpus_per_pod,tenant,gpu_model"]
    rows += [f"a{i},0,518400,1,1,a,A100" for i in range(4)] + ["b0,0,518400,1,1,b,A100"]
    (folder / "trace.csv").write_text("\n".join(rows) + "\n")
    assert main(["replay", "--trace", str(folder / "trace.csv"), "--cluster", str(folder / "cluster.csv"),
                 "--run-id", "r", "--start", "2026-11-02T00:00:00Z", "--out", str(folder / "run"), "-q"]) == 0
    assert main(["build", str(folder / "run"), "--prices", str(folder / "prices.csv"), "--db",
                 str(folder / "db.duckdb"), "-q"]) == 0
    (folder / "budgets.csv").write_text("team,month,budget_usd\na,2026-11,1000\nb,2026-11,100000\n")
    return folder


def test_report_with_budgets(built, tmp_path):
    assert main(["report", "--db", str(built / "db.duckdb"), "--out", str(tmp_path / "report"), "--format", "csv,md",
                 "--budgets", str(built / "budgets.csv"), "--phase", "all", "-q"]) == 0
    table = pd.read_csv(tmp_path / "report" / "budget_burn.csv").set_index("name")
    with duckdb.connect(str(built / "db.duckdb"), read_only=True) as con:
        charged = dict(con.execute("SELECT tenant, sum(charged_cost) FROM fct_chargeback WHERE idle_policy = 'window' "
                                   "AND tenant <> '__idle__' GROUP BY 1").fetchall())
    for team in ("a", "b"):  # the whole run lies in November: spend to date is everything charged
        assert table.loc[team, "spend_to_date"] == pytest.approx(charged[team], abs=0.01)
    assert table.loc["a", "status"] == "over" and table.loc["b", "status"] == "within"
    assert "over budget: a" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize(("budgets", "message"), [
    ("alhpa,,2026-11,100\n", "budgets.csv: row 2, field 'team': run 'r' has no team 'alhpa' (teams: a, b)"),
    ("a\u200b,,2026-11,100\n", "budgets.csv: row 2, field 'team': 'a\\u200b' has an invisible or control character"),
    (",cc-q,2026-11,100\n", "budgets.csv: row 2, field 'cost_centre': no team row of the file names the cost centre "
                           "'cc-q' and no pod label carries cost centres (cost centres: none)"),
    ("a,,2026-11,5,000\n", "budgets.csv: row 2: 5 fields, the header has 4 (an unquoted thousands separator?"),
])
def test_budgets_naming_nothing_in_the_run_stop_with_one_line(built, tmp_path, capsys, budgets, message):
    (tmp_path / "budgets.csv").write_text("team,cost_centre,month,budget_usd\n" + budgets, encoding="utf-8")
    code = main(["report", "--db", str(built / "db.duckdb"), "--out", str(tmp_path / "report"), "--format", "csv",
                 "--budgets", str(tmp_path / "budgets.csv"), "--phase", "all", "-q"])
    error = capsys.readouterr().err
    assert code != 0 and message in error and "Traceback" not in error and error.count("\n") == 1, error
    assert not (tmp_path / "report").exists()


def test_twenty_thousand_budgets_make_a_report_with_a_capped_chart(built, tmp_path):
    months = [f"{year}-{month:02d}" for year in range(2026, 3026) for month in range(1, 13)][:10_000]
    (tmp_path / "budgets.csv").write_text("team,month,budget_usd\n" + "".join(
        f"{team},{month},1000\n" for month in months for team in ("a", "b")))
    assert main(["report", "--db", str(built / "db.duckdb"), "--out", str(tmp_path / "report"), "--format", "csv,html",
                 "--budgets", str(tmp_path / "budgets.csv"), "--phase", "all", "-q"]) == 0
    burned = pd.read_csv(tmp_path / "report" / "budget_burn.csv")
    assert len(burned) == 20_000 and burned["spend_to_date"].sum() > 0
    html = (tmp_path / "report" / "index.html").read_text()
    assert "budget_burn" in html and html.count('class="chart"') > 1


def test_the_burn_chart_draws_the_budgets_furthest_over_with_a_note():
    from dashboards.finops_charts import BURN_CHART_ROWS, budget_burn_chart

    burned = pd.DataFrame([{"scope": "team", "name": f"t{i}", "month": "2026-11", "budget_usd": 100.0,
                            "spend_to_date": float(i), "forecast": float(i), "forecast_low": float(i),
                            "forecast_high": float(i), "status": "within"} for i in range(6_000)])
    spec = budget_burn_chart(burned).to_dict()
    assert f"the {BURN_CHART_ROWS} of 6,000 budgets furthest over" in spec["title"]
    drawn = next(iter(spec["datasets"].values()))
    assert sorted(row["name"] for row in drawn) == sorted(f"t{i}" for i in range(6_000 - BURN_CHART_ROWS, 6_000))


def test_the_scheduled_report_names_the_teams_over_budget(built, tmp_path):
    config = schedule_config(tmp_path, built, "monthly", "0 6 1 * *", "month", "out/{name}-{from}")
    assert main(["schedule", "--config", str(config), "--now", "2026-12-01T07:00:00Z"]) == 0
    written = next((tmp_path / "out").iterdir())
    assert (written / "budget_burn.csv").is_file()


def test_the_schedule_outcome_line(built, tmp_path, capsys):
    config = schedule_config(tmp_path, built, "monthly", "0 6 1 * *", "month", "out/{name}")
    assert main(["schedule", "--config", str(config), "--now", "2026-12-01T07:00:00Z"]) == 0
    assert "over budget: a" in capsys.readouterr().out


def test_the_budgets_page(built, monkeypatch):
    at = budgets_page(built, monkeypatch)
    assert not at.exception, [e.message for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Over budget"] == "a"
    assert len(at.get("vega_lite_chart")) == 1
    at = budgets_page(built, monkeypatch, budgets=False)
    assert "--budgets" in at.info[0].value


def test_a_cost_centre_from_labels_is_its_workloads_spend_not_its_teams(tmp_path):
    """With the cost centres' own daily spend (a pod label), a centre's budget burns that, not
    the teams the file's rows map to it; its days are judged for anomalies like a team's."""
    (tmp_path / "budgets.csv").write_text(BUDGETS)
    book = read_budgets(tmp_path / "budgets.csv")
    centre_days = [("research", date(2026, 11, d), 400.0 if d == 9 else 100.0, 10.0) for d in range(1, 11)]
    centres = CentreSpend("cost-center", pd.DataFrame(centre_days, columns=["cost_centre", "day", "spend", "idle_cost"]))
    research = burn(_daily(), book, date(2026, 11, 10), centres).set_index("name").loc["research"]
    # 9 x 100 + 400 = 1300 (not a + b's 1800); mean 130: 1300 + 20 x 130 = 3900 <= 5000
    assert (research["spend_to_date"], research["forecast"], research["status"], research["basis"]) == \
        (1300.0, 3900.0, "within", "label:cost-center")
    flagged = anomalies(_daily(), centres)
    assert flagged.loc[flagged["scope"] == "cost_centre", ["name", "day", "flag"]].values.tolist() == [
        ["research", date(2026, 11, 9), "spend high, idle low"]]  # idle share 10/400 against 0.1
    check_cost_centres(book, centres, "r")  # research is a value of the label
    with pytest.raises(DashboardError, match=r"^budgets.csv: row 5, field 'cost_centre': no workload of run 'r' "
                                             r"carries the label cost-center='research' \(values: ops\)$"):
        check_cost_centres(book, CentreSpend("cost-center", centres.daily.assign(cost_centre="ops")), "r")


def test_the_names_of_cost_centres_over_budget_say_so():
    burned = pd.DataFrame({"scope": ["team", "cost_centre", "cost_centre"], "name": ["a", "research", "ops"],
                           "status": ["over", "over", "trending over"]})
    assert teams_to_name(burned) == (["a", "cost centre research"], ["cost centre ops"])


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A replay of a labelled trace written here, from 2026-11-01 for 6 days on 8 A100s at list
    $3/GPU-hour: team a's a0, a1 carry cost-center=cc-x and a2, a3 cc-y; team b's b0 carries
    cc-y, u0 no label; on day 4 b's s0 (cc-y) holds 2 GPUs more. So 6 of 8 GPUs are busy (a GPU
    charged 8/6 x 24 x 3 = $96 a day, $24 of it idle), on day 4 all 8 ($72 a day, no idle)."""
    folder = tmp_path_factory.mktemp("labelled")
    (folder / "cluster.csv").write_text("node,gpu_model,gpus\nn0,A100,8\n")
    (folder / "prices.csv").write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\nA100,3,2,1\n")
    label = '"{""cost-center"":""%s""}"'
    rows = ["workload_id,submit_time,duration_s,pods,gpus_per_pod,tenant,gpu_model,labels"]
    rows += [f"a{i},0,518400,1,1,a,A100,{label % ('cc-x' if i < 2 else 'cc-y')}" for i in range(4)]
    rows += [f"b0,0,518400,1,1,b,A100,{label % 'cc-y'}", "u0,0,518400,1,1,b,A100,",
             f"s0,259200,86400,1,2,b,A100,{label % 'cc-y'}"]
    (folder / "trace.csv").write_text("\n".join(rows) + "\n")
    assert main(["replay", "--trace", str(folder / "trace.csv"), "--cluster", str(folder / "cluster.csv"),
                 "--run-id", "r", "--start", "2026-11-01T00:00:00Z", "--out", str(folder / "run"), "-q"]) == 0
    assert main(["build", str(folder / "run"), "--prices", str(folder / "prices.csv"), "--db",
                 str(folder / "db.duckdb"), "-q"]) == 0
    # cc-x is mapped to team a too: with the label, the mapping does not count
    (folder / "budgets.csv").write_text("team,cost_centre,month,budget_usd\na,cc-x,2026-11,20000\n"
                                        ",cc-x,2026-11,6000\n,cc-y,2026-11,8000\n")
    return folder


def test_cost_centre_burn_and_anomalies_from_the_label(labelled, tmp_path):
    assert main(["report", "--db", str(labelled / "db.duckdb"), "--out", str(tmp_path / "report"), "--format", "csv,md",
                 "--budgets", str(labelled / "budgets.csv"), "--phase", "all", "-q"]) == 0
    table = pd.read_csv(tmp_path / "report" / "budget_burn.csv").set_index(["scope", "name"])
    # cc-y: 3 GPUs x $96 a day, on day 4 5 x $72 = $360: 5 x 288 + 360 = $1,800 in 6 days (of 30),
    # mean 300: forecast 1800 + 24 x 300 = $9,000 > 8,000. Sample sd: sqrt((5 x 12² + 60²) / 5) =
    # sqrt(864); half-width t(0.975, 5) x sqrt(864) x sqrt(24 + 24² / 6) = 2.5705818 x sqrt(864 x 120)
    # = 827.71 (it was 1.96 x sqrt(864 x 24) = 282.24 with the mean taken as known).
    y = table.loc[("cost_centre", "cc-y")]
    assert (y["spend_to_date"], y["days_elapsed"], y["forecast"], y["forecast_low"], y["forecast_high"]) == \
        (1800.0, 6, 9000.0, 8172.29, 9827.71)
    assert (y["status"], y["basis"]) == ("trending over", "label:cost-center")
    # cc-x: 2 x 96 a day, 2 x 72 on day 4: 5 x 192 + 144 = $1,104 (team a, mapped to it, is $2,208);
    # mean 184: 1104 + 24 x 184 = $5,520 <= 6,000
    x = table.loc[("cost_centre", "cc-x")]
    assert (x["spend_to_date"], x["forecast"], x["status"]) == (1104.0, 5520.0, "within")
    assert table.loc[("team", "a"), "spend_to_date"] == 2208.0
    flagged = pd.read_csv(tmp_path / "report" / "budget_anomalies.csv")
    centres = flagged[flagged["scope"] == "cost_centre"]
    # day 4 stands out (cc-y $360 against $288), but only three days come before it: a day is
    # judged against at least four earlier days, never against the days after it
    assert centres.empty
    assert "trending over: cost centre cc-y" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize(("budgets", "args", "message"), [
    (",cc-z,2026-11,100\n", [], "budgets.csv: row 2, field 'cost_centre': no workload of run 'r' carries the label "
                                "cost-center='cc-z' (values: cc-x, cc-y)"),
    (",cc-x,2026-1x,100\n", [], "budgets.csv: row 2, field 'month': YYYY-MM, got '2026-1x'"),
    (",cc-x,2026-11,100\n", ["--cost-centre-label", "cost_center"],
     "no workload of run 'r' carries the label 'cost_center' (keys: cost-center)"),
])
def test_bad_cost_centre_budgets_stop_with_one_line(labelled, tmp_path, capsys, budgets, args, message):
    (tmp_path / "budgets.csv").write_text("team,cost_centre,month,budget_usd\n" + budgets)
    code = main(["report", "--db", str(labelled / "db.duckdb"), "--out", str(tmp_path / "report"), "--format", "csv",
                 "--budgets", str(tmp_path / "budgets.csv"), "--phase", "all", "-q", *args])
    error = capsys.readouterr().err
    assert code != 0 and message in error and "Traceback" not in error, error
    assert not (tmp_path / "report").exists()


def test_the_scheduled_report_names_the_cost_centres_trending_over(labelled, tmp_path, capsys):
    config = schedule_config(tmp_path, labelled, "daily", "0 6 * * *", "day", "out/{name}",
                             cost_centre_label="cost-center")
    # fired on the 7th: the report of the 6th, the month's burn to that day
    assert main(["schedule", "--config", str(config), "--now", "2026-11-07T07:00:00Z"]) == 0
    assert "trending over: cost centre cc-y" in capsys.readouterr().out
    burned = pd.read_csv(tmp_path / "out" / "daily" / "budget_burn.csv")
    assert burned.loc[burned["name"] == "cc-y", "forecast"].tolist() == [9000.0]


def test_the_budgets_page_shows_the_cost_centres(labelled, monkeypatch):
    at = budgets_page(labelled, monkeypatch)
    assert not at.exception, [e.message for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Trending over"] == "cost centre cc-y"
    assert [s.value for s in at.subheader][:2] == ["Teams", "Cost centres"]
    assert len(at.get("vega_lite_chart")) == 2  # the teams' burn and the cost centres'


def test_a_cost_centre_label_without_budgets_is_refused(tmp_path):
    from dashboards.schedule import load_config

    (tmp_path / "reports.toml").write_text('[[report]]\nname = "d"\ncron = "0 6 * * *"\ndb = "x.duckdb"\n'
                                           'out = "out"\ncost_centre_label = "cost-center"\n')
    with pytest.raises(DashboardError, match="report 'd': field 'cost_centre_label' needs field 'budgets'"):
        load_config(tmp_path / "reports.toml")
