"""Charts stay bounded however many names a table has: a bar chart of names (teams, pod label
values) draws the largest and one bar of the others summed, with a note in its title; a report
section whose chart would still pass altair's row cap is shown without it, with a note."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboards import charts, finops_charts, report


def _values(count: int) -> pd.DataFrame:
    """``count`` pod label values v0.. with usage cost i and idle share 1 each."""
    return pd.DataFrame({"tenant": [f"v{i}" for i in range(count)], "usage_cost": [float(i) for i in range(count)],
                         "idle_share_cost": [1.0] * count})


def test_six_thousand_label_values_draw_the_largest_and_the_others_summed():
    spec = charts.team_chargeback_chart(_values(6_000), title="Charged cost per team-label").to_dict()
    drawn = pd.DataFrame(next(iter(spec["datasets"].values())))
    kept = [f"v{i}" for i in range(6_000 - charts.CHART_BARS + 1, 6_000)]
    others = 6_000 - len(kept)
    assert set(drawn["tenant"]) == {*kept, f"other ({others:,})"}
    # every dollar is drawn once: the others' bar is their sum
    assert drawn["cost"].sum() == sum(range(6_000)) + 6_000
    assert drawn.loc[drawn["tenant"] == f"other ({others:,})", "cost"].sum() == sum(range(others)) + others
    assert f"{others:,} others summed" in str(spec["title"])


def test_a_few_values_are_drawn_as_they_are():
    spec = charts.team_chargeback_chart(_values(5)).to_dict()
    assert spec["title"] == "Charged cost per team"
    assert {row["tenant"] for row in next(iter(spec["datasets"].values()))} == {f"v{i}" for i in range(5)}


@pytest.mark.parametrize(("chart", "value"), [
    (charts.spend_by_team_chart, "effective_cost"),
    (finops_charts.waiting_cost_chart, "pending_demand_list_value"),
])
def test_charts_of_teams_draw_the_largest_and_the_others_summed(chart, value):
    teams = pd.DataFrame({"tenant": [f"t{i}" for i in range(6_000)], value: [float(i) for i in range(6_000)],
                          "workloads": [1] * 6_000})
    spec = chart(teams).to_dict()
    drawn = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert len(drawn) == charts.CHART_BARS and drawn[value].sum() == sum(range(6_000))
    assert drawn.loc[drawn["tenant"] == "other (5,971)", "workloads"].tolist() == [5_971]
    assert "5,971 others summed" in str(spec["title"])


def test_a_report_section_past_the_row_cap_keeps_its_table_and_says_why_it_has_no_chart():
    losses = pd.DataFrame({"tenant": [f"t{i}" for i in range(6_000)], "cause": ["reclaim"] * 6_000,
                           "evictions": [1] * 6_000, "lost_cost": [1.0] * 6_000, "lost_cost_per_eviction": [1.0] * 6_000})
    section = report.Section("checkpoint_loss", "Checkpoint loss", "Lost work.", losses,
                              finops_charts.eviction_losses_chart)
    report._drop_chart_past_row_cap(section)
    assert section.chart is None and len(section.table) == 6_000
    assert section.note == "Lost work. No chart: 6,000 rows are more than a chart draws; the table has each."
    small = report.Section("checkpoint_loss", "Checkpoint loss", "Lost work.", losses.head(3),
                            finops_charts.eviction_losses_chart)
    report._drop_chart_past_row_cap(small)
    assert small.chart is not None and small.note == "Lost work."
