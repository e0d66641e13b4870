"""Chart builders are pure: DataFrame in, a valid Vega-Lite spec out, fixed colours."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboards import charts, data


@pytest.fixture
def con(fixture_db):
    connection = data.connect_read_only(fixture_db)
    yield connection
    connection.close()


def test_every_builder_produces_a_vega_lite_spec(con):
    filters = data.Filters("demo-a")
    pending = data.pending_workloads(con, filters)
    built = [
        charts.spend_by_team_chart(data.spend_by_team(con, filters)),
        charts.usage_class_over_time_chart(data.usage_class_over_time(con, filters)),
        charts.idle_cost_by_cause_chart(data.idle_cost_by_cause(con, filters)),
        charts.costliest_workloads_chart(data.costliest_workloads(con, filters)),
        charts.workload_timeline_chart(data.workload_timeline(con, "demo-a", "gang-2")),
        charts.pending_by_reason_chart(data.pending_by_reason(pending)),
    ]
    for chart in built:
        spec = chart.to_dict()
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_usage_class_colours_are_fixed_whatever_the_data():
    only_idle = pd.DataFrame({"period_start": pd.to_datetime(["2026-11-02"]),
                              "usage_class": ["idle"], "gpu_hours": [3.0]})
    scale = charts.usage_class_over_time_chart(only_idle).to_dict()["encoding"]["color"]["scale"]
    assert scale["domain"] == ["productive", "gang_wait", "lost_to_preemption", "idle"]
    assert dict(zip(scale["domain"], scale["range"], strict=True)) == charts.USAGE_CLASS_COLORS


def test_empty_frames_still_build():
    empty = pd.DataFrame({"tenant": [], "effective_cost": []})
    assert charts.spend_by_team_chart(empty).to_dict()["mark"]["type"] == "bar"
