"""Cost attribution IV, one rule a test, on the hand-made logs of tests/pipeline/scenarios_causes.py:
an idle GPU-hour goes to a cause only where removing that cause would have put it to work, and
pending demand counts only what the cluster could have run. Expected figures are worked out in
each scenario's comment; docs/cost-model.md states the rules.

Prices (tests/pipeline/runs.py): A100 list 2.0 per GPU-hour.
"""

from __future__ import annotations

import pytest
from tables import approx_rows, as_dict, rows


def idle_by_cause(con, run_id: str) -> dict[tuple, float]:
    """(gpu_model, idle reason) → GPU-hours over the run (zero amounts left out)."""
    return {
        key: value
        for key, value in as_dict(
            con,
            """select gpu_model, idle_reason, sum(gpu_hours) from int_idle_by_cause
               where run_id = ? group by all""",
            [run_id],
        ).items()
        if abs(value) > 1e-12
    }


def assert_close(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys(), actual
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, abs=1e-9), key


def test_pending_demand_is_capped_by_the_idle_of_its_period_and_model(con):
    # hour 0 the node is fully busy: nothing could have run w there
    assert rows(
        con,
        """select workload_id, period_index, gpu_model, gpu_hours, list_value from int_pending_demand_capped
           where run_id = 'pending-busy' order by all""",
    ) == [("w", 1, "A100", 4.0, 8.0)]
    approx_rows(
        rows(
            con,
            """select workload_id, pending_demand_gpu_hours, pending_demand_list_value from fct_workloads
               where run_id = 'pending-busy' and workload_id = 'w'""",
        ),
        [("w", 4.0, 8.0)],
    )
    # never more than the idle of its period and model, anywhere
    assert rows(
        con,
        """with demand as (select run_id, period_index, gpu_model, sum(gpu_hours) as gpu_hours
                           from int_pending_demand_capped group by all),
                idle as (select run_id, period_index, gpu_model, sum(idle_gpu_hours) as idle_gpu_hours
                         from int_node_capacity_periods group by all)
           select d.run_id, d.period_index, d.gpu_model from demand as d
           left join idle as i using (run_id, period_index, gpu_model)
           where d.gpu_hours > coalesce(i.idle_gpu_hours, 0) + 1e-9""",
    ) == []
