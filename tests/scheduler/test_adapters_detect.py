"""`replay --format auto` and inventory clusters: detection from the header, dispatch to
the adapters, the run start, and accepted + rejected = input rows in the run directory."""

from __future__ import annotations

import csv
import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gpu_finops.cli import main
from scheduler.commands import replay
from scheduler.errors import InputError
from scheduler.trace.detect import detect_trace_format, load_trace

DEFAULT_START = datetime(2026, 11, 2, tzinfo=UTC)
OPENB = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "openb-pod-0001,4000,1024,1,500,,LS,Running,0,3600,0\n"
    "openb-pod-0002,4000,1024,1,500,,BE,Running,60,3660,60\n"
    "openb-pod-0003,4000,1024,0,0,,BE,Running,60,3660,60\n"
    "openb-pod-0004,4000,1024,2,1000,G2,BE,Running,120,7320,120\n"
)
OPENB_NODES = "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,32000,262144,0,\nopenb-node-0001,96000,786432,2,G2\n"
AAIC = (
    "id, user, group, queue, nodes, gpus, walltime_req, termcode, time_submit, time_start, time_end, waittime, walltime\n"
    "1, 0, 0, 0, 2, 8, 86400, 0, 1506816000, 1506816010, 1506819610, 10, 3600\n"
    "2, 1, 1, 1, 1, 4, 86400, 0, 1506816100, 1506816100, 1506816100, 0, 0\n"
    "3, 1, 1, 1, 1, 4, 86400, 3, 1506816200, 1506816300, 1506817300, 100, 1000\n"
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_auto_detects_each_format_from_its_header(tmp_path):
    assert detect_trace_format(write(tmp_path, "a.csv", OPENB)) == "openb"
    assert detect_trace_format(write(tmp_path, "b.csv.gz", AAIC)) == "aaic"
    assert detect_trace_format(write(tmp_path, "c.csv", "workload_id,submit_time,duration_s,gpus_per_pod\nw,0,1,1\n")) == "generic"
    with pytest.raises(InputError) as error:
        detect_trace_format(write(tmp_path, "d.csv", "job,when\n1,2\n"))
    assert str(error.value) == "d.csv: row 1: unknown trace format (header: job, when); give --format generic, openb or aaic"


def test_relative_times_take_the_start_and_unix_times_map_to_utc(tmp_path):
    openb = write(tmp_path, "pods.csv", OPENB)
    _, anchor, chosen = load_trace(openb, "auto", None, DEFAULT_START)
    assert (anchor, chosen) == (DEFAULT_START, "openb")
    given = datetime(2026, 1, 5, tzinfo=UTC)
    assert load_trace(openb, "openb", given, DEFAULT_START)[1] == given
    loaded, anchor, chosen = load_trace(write(tmp_path, "log.csv", AAIC), "auto", None, DEFAULT_START)
    assert (anchor, chosen) == (datetime(2017, 10, 1, tzinfo=UTC), "aaic")
    assert [w.submit_time_s for w in loaded.workloads] == [0.0, 200.0]
    with pytest.raises(InputError, match="unknown trace format 'swf'"):
        load_trace(openb, "swf", None, DEFAULT_START)


def test_an_openb_replay_on_an_openb_node_list_accounts_for_every_row(tmp_path):
    pods, nodes = write(tmp_path, "pods.csv", OPENB), write(tmp_path, "nodes.csv", OPENB_NODES)
    result = replay(pods, nodes, tmp_path / "run", profile="gang-v1.37", start="2026-01-05T00:00:00Z")
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    counts = manifest["counts"]
    assert manifest["start"] == "2026-01-05T00:00:00Z"
    assert (counts["input_rows"], counts["workloads"], counts["rejected_rows"]) == (4, 3, 1)
    assert counts["workloads"] + counts["rejected_rows"] == counts["input_rows"]
    assert (counts["nodes"], counts["gpus"]) == (2, 2)
    with open(tmp_path / "run" / "rejected.csv", encoding="utf-8") as handle:
        (rejected,) = list(csv.DictReader(handle))
    assert (rejected["row"], rejected["workload_id"], rejected["field"]) == ("4", "openb-pod-0003", "num_gpu")
    events = pq.read_table(tmp_path / "run" / "events.parquet").to_pylist()
    started = [(e["workload_id"], e["node"], e["gpus"]) for e in events if e["event"] == "started"]
    # The two half-GPU pods share one device; the 2-GPU G2 pod waits for them to finish.
    assert started[:2] == [("openb-pod-0001", "openb-node-0001", 0.5), ("openb-pod-0002", "openb-node-0001", 0.5)]
    assert result.workloads == 3


def test_an_aaic_replay_through_the_cli_starts_at_the_logs_first_day(tmp_path, capsys):
    log = write(tmp_path, "aaicwl-test.csv.gz", AAIC)
    cluster = write(tmp_path, "cluster.csv", "node,gpu_model,gpus\nn0,P100,8\nn1,P100,8\n")
    assert main(["replay", "-q", "--trace", str(log), "--cluster", str(cluster), "--out", str(tmp_path / "run")]) == 0
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["start"] == "2017-10-01T00:00:00Z"
    assert (manifest["counts"]["workloads"], manifest["counts"]["rejected_rows"]) == (2, 1)
    assert "2 workloads" in capsys.readouterr().out
    workloads = pq.read_table(tmp_path / "run" / "workloads.parquet").to_pylist()
    assert [(w["workload_id"], w["pods"], w["min_count"], w["tenant"], w["queue"]) for w in workloads] == [
        ("aaic-1", 2, 2, "group-0", "q0"), ("aaic-3", 1, 1, "group-1", "q1"),
    ]


def test_the_cli_reports_an_unknown_trace_header_on_one_line(tmp_path, capsys):
    bad = write(tmp_path, "bad.csv", "job,when\n1,2\n")
    cluster = write(tmp_path, "cluster.csv", OPENB_NODES)
    assert main(["replay", "-q", "--trace", str(bad), "--cluster", str(cluster), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "gpu-finops replay: bad.csv: row 1: unknown trace format (header: job, when); give --format generic, openb or aaic"
    assert not (tmp_path / "run").exists()
