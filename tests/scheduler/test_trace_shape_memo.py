"""Rows of one shape parse alike (`scheduler/trace/shape_memo.py`): the memo against parsing
every row whole.

Hypothesis writes CSV traces from pools of valid and invalid cells for every kind of column (a
row's own columns and its shape's), so shapes repeat, some parse and some fail, and rows of a
clean shape fail on their own columns: the workloads and the rejected rows (column and reason)
must be those of the reader without the memo, row for row.
"""

from __future__ import annotations

import csv

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.trace import generic
from scheduler.trace.generic import iter_generic_trace
from scheduler.trace.shape_memo import ShapeMemo

START = generic.datetime(2026, 1, 1, tzinfo=generic.UTC)
VALID = 4  # each valid cell this many times in its pool: most rows parse, some fail
POOLS = {
    "workload_id": [f"w{i}" for i in range(40)] + ["", " w4 "],
    "submit_time": ["0", "10", "2026-01-01T01:00:00Z"] * VALID + ["-1", "x", ""],
    "duration_s": ["60", "3.5"] * VALID + ["0", "-5", "x", "", "1e12"],
    "gpus_per_pod": ["1", "0.5", "8"] * VALID + ["0", "2.5", ""],
    "pods": ["", "1", "4"] * VALID + ["0", "x"],
    "min_count": ["", "1"] * VALID + ["3", "9"],
    "gpu_model": ["", "A100", "A100|H100"],
    "priority": ["", "0", "100", "-5"] * VALID + ["1e20", "high"],
    "tenant": ["", "a", "b"],
    "disruption_mode": ["", "single", "all"] * VALID + ["some"],
    "gpu_utilization": ["", "0.5", "0.25"] * VALID + ["2", "x"],
    "labels": ["", '{"team": "a"}', '{"team": "b", "app": "x"}'] * VALID + ['{"team": ""}', "not json"],
}
FUZZ = settings(max_examples=150, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class _EveryRowWhole(ShapeMemo):
    def seen(self, record):  # type: ignore[no-untyped-def]
        return None


def _read(path):
    batches = list(iter_generic_trace(path, START, batch_rows=7))
    return ([w for b in batches for w in b.workloads], [r for b in batches for r in b.rejected])


OWN = ("workload_id", "submit_time", "duration_s", "gpu_utilization", "labels")
SHAPE = st.fixed_dictionaries({column: st.sampled_from(cells) for column, cells in POOLS.items() if column not in OWN})
OWN_CELLS = st.fixed_dictionaries({column: st.sampled_from(POOLS[column]) for column in OWN})


@st.composite
def _rows(draw: st.DrawFn) -> list[dict[str, str]]:
    """Rows over a few shapes, so that shapes repeat."""
    shapes = draw(st.lists(SHAPE, min_size=1, max_size=3))
    return [{**draw(OWN_CELLS), **draw(st.sampled_from(shapes))} for _ in range(draw(st.integers(1, 30)))]


@FUZZ
@given(rows=_rows())
def test_the_memo_reads_what_parsing_every_row_whole_reads(tmp_path_factory, monkeypatch, rows):
    path = tmp_path_factory.mktemp("memo") / "trace.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(POOLS))
        writer.writeheader()
        writer.writerows(rows)
    memo = _read(path)
    with monkeypatch.context() as patch:
        patch.setattr(generic, "ShapeMemo", _EveryRowWhole)
        whole = _read(path)
    assert memo == whole


def test_a_shape_is_parsed_once_and_its_rows_take_their_own_columns(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("workload_id,submit_time,duration_s,gpus_per_pod,pods,labels\n"
                    'a,0,60,1,2,\nb,5,70,1,2,"{""team"": ""x""}"\nc,9,80,2,1,\n')
    workloads, rejected = _read(path)
    assert not rejected
    assert [(w.workload_id, w.submit_time_s, w.duration_s, w.pods, w.labels, w.source_row) for w in workloads] == [
        ("a", 0.0, 60.0, 2, (), 2), ("b", 5.0, 70.0, 2, (("team", "x"),), 3), ("c", 9.0, 80.0, 1, (), 4)]
    memo = ShapeMemo(["workload_id", "submit_time", "duration_s", "gpus_per_pod", "pods", "labels"])
    assert memo.shape_columns == ["gpus_per_pod", "pods"]
