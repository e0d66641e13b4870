"""Inputs that used to crash a command or mislead it silently (issue 20, items 4, 5, 8, 12).

Numbers far out of range, control characters in names, a node with 2^31-1 GPUs, Ctrl-C while
starting, a misspelt column, a Kueue configuration that admits nothing, gzip, bytes that are
not UTF-8, a pipe as input, a gzip bomb. Through the command line each time: in this process
(`main`) where a crash is an exception, in a child where it is an abort, a signal or memory.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.reliability.conftest import CLUSTER, PRICES
from tests.reliability.processes import (
    assert_one_line_error,
    in_process,
    interrupt,
    run,
    run_cli,
)

HEADER = ["workload_id", "submit_time", "duration_s", "pods", "min_count", "gpus_per_pod", "gpu_model",
          "cpu_milli_per_pod", "memory_mib_per_pod", "tenant", "queue", "priority", "checkpoint_interval_s"]
GOOD = {"workload_id": "ok", "submit_time": "0", "duration_s": "3600", "pods": "1", "min_count": "1",
        "gpus_per_pod": "1", "gpu_model": "A100", "cpu_milli_per_pod": "0", "memory_mib_per_pod": "0",
        "tenant": "team-a", "queue": "", "priority": "0", "checkpoint_interval_s": ""}
HUGE = ("1e306", "-1e306", "9" * 400, "1e308")


def _csv(rows: list[dict[str, str]], header: list[str] = HEADER) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _replay(folder: Path, trace: Path, *extra: str) -> tuple[int, str, str]:
    (folder / "cluster.csv").write_text(CLUSTER)
    return in_process("replay", "--trace", str(trace), "--cluster", str(folder / "cluster.csv"),
                      "--out", str(folder / "run"), *extra)


def _rejected(run: Path) -> list[dict[str, str]]:
    with (run / "rejected.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# ------------------------------------------------------------------ item 4: bounds first


def test_every_numeric_field_out_of_range_is_quarantined_not_a_crash(tmp_path):
    """Item 4: gpus_per_pod=1e306 raised OverflowError (arithmetic before the range check)."""
    numeric = ["submit_time", "duration_s", "pods", "min_count", "gpus_per_pod", "cpu_milli_per_pod",
               "memory_mib_per_pod", "priority", "checkpoint_interval_s"]
    rows = [GOOD]
    for column in numeric:
        for value in HUGE:
            rows.append({**GOOD, "workload_id": f"{column}={value[:6]}", column: value})
    trace = tmp_path / "trace.csv"
    trace.write_text(_csv(rows))
    code, _, err = _replay(tmp_path, trace)
    assert code == 0, err
    rejected = _rejected(tmp_path / "run")
    assert len(rejected) == len(rows) - 1
    assert {r["field"] for r in rejected} == set(numeric)
    assert max(len(r["reason"]) for r in rejected) < 200, "a reason quoted a 300-digit number"


def test_adapters_bound_their_numbers_before_arithmetic(tmp_path):
    """The AAIC and openb adapters: a 400-digit node count, a 1e300-GPU pod."""
    aaic = tmp_path / "aaic.csv"
    aaic.write_text("id, user, group, queue, nodes, gpus, walltime_req, termcode, time_submit, time_start, "
                    "time_end, waittime, walltime\n"
                    f"1, 1, 1, 1, {'9' * 400}, 4, 3600, 0, 1500000000, 1500000100, 1500003700, 100, 3600\n"
                    "2, 1, 1, 1, 2, 4, 3600, 0, 1500000000, 1500000100, 1500003700, 100, 3600\n")
    code, _, err = _replay(tmp_path, aaic)
    assert code == 0, err
    assert [r["field"] for r in _rejected(tmp_path / "run")] == ["nodes"]
    openb = tmp_path / "openb.csv"
    openb.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                     "deletion_time,scheduled_time\n"
                     "p1,1000,1024,1e300,1000,,BE,Running,0,3600,10\np2,1000,1024,1,500,,BE,Running,0,3600,10\n")
    shutil.rmtree(tmp_path / "run")
    code, _, err = _replay(tmp_path, openb)
    assert code == 0, err
    assert [r["field"] for r in _rejected(tmp_path / "run")] == ["num_gpu"]


@pytest.mark.parametrize("document", [
    "nominalQuota: 1e400", "nominalQuota: " + "9" * 5000, "nominalQuota: 99999999999999999999Ei",
])
def test_a_kueue_quota_out_of_range_is_one_line(tmp_path, document):
    queues = tmp_path / "queues.yaml"
    queues.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: a100\n"
        f"      resources:\n      - name: nvidia.com/gpu\n        {document}\n")
    trace = tmp_path / "trace.csv"
    trace.write_text(_csv([GOOD]))
    code, _, err = _replay(tmp_path, trace, "--queues", str(queues))
    assert "queues.yaml" in assert_one_line_error("replay", code, err)


def test_a_toml_integer_too_long_for_python_is_one_line(tmp_path):
    cluster = tmp_path / "pools.toml"
    cluster.write_text(f'[[pool]]\nname_prefix = "a"\ngpu_model = "A100"\ngpus = 8\ncount = {"9" * 5000}\n')
    trace = tmp_path / "trace.csv"
    trace.write_text(_csv([GOOD]))
    code, _, err = in_process("replay", "--trace", str(trace), "--cluster", str(cluster), "--out", str(tmp_path / "run"))
    assert "pools.toml" in assert_one_line_error("replay", code, err)


# ----------------------------------------------------- item 5: control characters in names

CONTROL_NAMES = ["esc\x1b[31mred", "nul\x00byte", "bell\x07", "csi\x9b2J", "title\x1b]0;pwned\x07", "del\x7f"]


def test_names_with_control_characters_are_quarantined(tmp_path):
    rows = [GOOD] + [{**GOOD, "workload_id": f"w{i}", "tenant": name} for i, name in enumerate(CONTROL_NAMES)]
    rows.append({**GOOD, "workload_id": "id\x1b[2J", "tenant": "team-a"})
    trace = tmp_path / "trace.csv"
    trace.write_text(_csv(rows))
    code, _, err = _replay(tmp_path, trace)
    assert code == 0, err
    rejected = _rejected(tmp_path / "run")
    assert [r["field"] for r in rejected] == ["tenant"] * len(CONTROL_NAMES) + ["workload_id"]
    assert all("unprintable character" in r["reason"] for r in rejected)
    text = (tmp_path / "run" / "rejected.csv").read_text(encoding="utf-8")
    assert "\x1b" not in text and "\x00" not in text


@pytest.fixture(scope="module")
def control_db(workspace, tmp_path_factory) -> Path:
    """A database whose teams and workload ids hold control characters and markup: built from
    a run folder written elsewhere (the replay now refuses such names)."""
    from pipeline.build import build

    folder = tmp_path_factory.mktemp("control")
    run = Path(shutil.copytree(workspace.run_a, folder / "run"))
    table = pq.read_table(run / "workloads.parquet")
    names = ["esc\x1b[31mred\x1b[0m", "nul\x00byte", "<script>alert(1)</script>",
             "[click](javascript:alert(1))", "csi\x9b2J", "\ufffeodd"]
    tenants = [names[i % len(names)] for i in range(table.num_rows)]
    index = table.schema.get_field_index("tenant")
    table = table.set_column(index, table.schema.field("tenant"), pa.array(tenants, pa.string()))
    pq.write_table(table, run / "workloads.parquet")
    db = folder / "marts.duckdb"
    build([run], _prices(folder), db, show_progress=False)
    return db


def _prices(folder: Path) -> Path:
    path = folder / "prices.csv"
    path.write_text(PRICES)
    return path


def test_a_report_of_names_with_control_characters_is_written_in_every_format(control_db, tmp_path):
    """Item 5: the chart renderer aborted (SIGABRT) on ESC and NUL and no report was written."""
    out = tmp_path / "report"
    finished = run_cli("report", "--db", str(control_db), "--out", str(out), "--format", "html,md,csv,png")
    assert finished.code == 0 and not finished.traceback, finished.err[-2000:]
    written = sorted(p.name for p in out.iterdir())
    assert {"index.html", "report.md", "spend_by_team.csv", "spend_by_team.png"} <= set(written)
    for name in written:
        if name.endswith((".html", ".md", ".csv")):
            text = (out / name).read_text(encoding="utf-8")
            assert not any(c in text for c in "\x1b\x00\x9b\ufffe"), f"{name} carries a control character"
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown, "raw HTML in report.md"
    assert not re.search(r"(?<!\\)\[click(?<!\\)\]\(", markdown), "a link in report.md"
    assert "\\<script\\>" in markdown and "\\[click\\](javascript:" in markdown


def test_terminal_output_of_sql_and_errors_carries_no_escape_sequence(control_db, tmp_path):
    """Item 10: `sql` printed cells raw, and error messages echoed escape sequences."""
    code, out, err = in_process("sql", "--db", str(control_db),
                                "SELECT DISTINCT x_Tenant, '[/x] [bold]' AS markup FROM focus_cost_records")
    assert code == 0, err
    assert "\x1b" not in out and "\x00" not in out and "\x9b" not in out and "␛[31mred" in out
    assert "[/x] [bold]" in out, "cell text read as rich markup"
    code, out, err = in_process("sql", "--db", str(tmp_path / "no\x1b[2Jsuch.duckdb"), "SELECT 1")
    assert "\x1b" not in assert_one_line_error("sql", code, err) and "␛[2J" in err
    code, _, err = in_process("explain", "--db", str(control_db), "--run-id", "a", "w000")
    assert code == 0 and "\x1b" not in err


def test_the_dashboard_shows_names_as_text_not_markdown(control_db, monkeypatch):
    """A caption is Markdown: a team named [click](javascript:…) or ![](http://…) would become
    a link, or an image fetched from another site, if pasted in raw."""
    from streamlit.testing.v1 import AppTest

    from dashboards.data import DB_ENV_VAR

    monkeypatch.setenv(DB_ENV_VAR, str(control_db))
    app = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")
    seen = []
    for workload in ("w002", "w003"):  # teams <script>… and [click](javascript:…)
        at = AppTest.from_file(app, default_timeout=60)
        at.query_params["run"] = "a"
        at.query_params["workload"] = workload
        at = at.run()
        at = at.switch_page("app_pages/workload.py").run()
        assert not at.exception, [e.message for e in at.exception]
        captions = " ".join(c.value for c in at.caption)
        seen.append(captions)
        assert "[click](" not in captions and "<script>" not in captions
        assert not any(c in captions for c in "\x1b\x00\x9b"), captions
    assert any("\\[click\\](javascript:" in c for c in seen), "the escaped name is shown"


# ------------------------------------------------- item 8: a huge node, Ctrl-C at start-up


def test_ctrl_c_while_the_command_starts_prints_one_line_not_a_traceback(workspace, tmp_path):
    """Item 8: Ctrl-C while the command line was being set up (its parser imports the
    commands' modules) printed a traceback. The child signals once its `main` module is
    imported; Ctrl-C then comes at moments across the start-up and the first reads."""
    starter = ("import os, sys; import gpu_finops.cli as cli; os.write(1, b'.'); "
               "sys.exit(cli.main(sys.argv[1:]))")
    argv = ["replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
            str(workspace.inputs / "cluster.csv"), "--out", str(tmp_path / "run"), "-q"]
    import sys

    for delay in (0.02, 0.05, 0.15, 0.3, 0.6):
        def signal_when_started(process, delay=delay):
            process.stdout.read(1)  # the child's "." (its main module is imported)
            interrupt(process, delay)

        finished = run([sys.executable, "-c", starter, *argv], after_start=signal_when_started, timeout_s=60)
        assert not finished.traceback, f"Ctrl-C after {delay} s: {finished.err[-1500:]}"
        assert finished.code in (0, 130), (delay, finished.code, finished.err)
        if finished.code == 130:
            assert finished.err.strip() == "gpu-finops: interrupted"
        shutil.rmtree(tmp_path / "run", ignore_errors=True)


def test_a_node_with_the_most_gpus_the_limits_allow_replays_in_bounded_memory(tmp_path):
    """Item 8: a node declaring 2^31-1 GPUs (within the documented limits) made the state grow
    per GPU: 23.7 GB before it was stopped. Under a 3 GiB address-space limit the replay must
    finish, quickly."""
    (tmp_path / "cluster.csv").write_text("node,gpu_model,gpus\nbig,H100,2147483647\n")
    (tmp_path / "trace.csv").write_text("workload_id,submit_time,duration_s,gpus_per_pod,gpu_model\n"
                                        "w1,0,3600,8,H100\nw2,60,3600,1000000,H100\n")
    began = time.monotonic()
    finished = run_cli("replay", "--trace", str(tmp_path / "trace.csv"), "--cluster", str(tmp_path / "cluster.csv"),
                       "--out", str(tmp_path / "run"), "-q", memory_limit_bytes=3 << 30, timeout_s=60)
    assert finished.code == 0, finished.err[-1500:]
    assert time.monotonic() - began < 60
    assert json.loads((tmp_path / "run" / "run.json").read_text())["counts"]["gpus"] == 2**31 - 1


# ------------------------------------------------------- item 12: unclear or silent inputs


def test_a_column_that_looks_like_a_known_one_is_warned_about(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("workload_id,submit_time,duration_s,gpus_per_pod,tennant\nw1,0,3600,1,team-a\n")
    code, _, err = _replay(tmp_path, trace)
    assert code == 0
    assert "warning:" in err and "'tennant'" in err and "'tenant'" in err
    (tmp_path / "nodes.csv").write_text("node,gpu_model,gpus,pricing_categroy\na1,A100,8,Committed\n")
    shutil.rmtree(tmp_path / "run")
    code, _, err = in_process("replay", "--trace", str(trace), "--cluster", str(tmp_path / "nodes.csv"),
                              "--out", str(tmp_path / "run"))
    assert code == 0 and "'pricing_categroy'" in err and "'pricing_category'" in err


KUEUE_FLAVOR = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
                "spec: {nodeLabels: {nvidia.com/gpu.product: A100}}\n")
KUEUE_CYCLE = KUEUE_FLAVOR + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: left}
spec: {parentName: right}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: right}
spec: {parentName: left}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: left
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: default}
spec: {clusterQueue: cq}
"""


@pytest.mark.parametrize("queues, expected", [
    ("", "defines no ClusterQueue"),
    (KUEUE_FLAVOR, "defines no ClusterQueue"),
    (KUEUE_CYCLE, "Cohort cycle left -> right -> left"),
])
def test_a_kueue_configuration_that_admits_nothing_is_said_on_the_console(tmp_path, queues, expected):
    (tmp_path / "queues.yaml").write_text(queues)
    trace = tmp_path / "trace.csv"
    trace.write_text(_csv([{**GOOD, "queue": "team-a"}, {**GOOD, "workload_id": "w2", "queue": "team-a"}]))
    code, _, err = _replay(tmp_path, trace, "--queues", str(tmp_path / "queues.yaml"))
    assert code == 0, err
    assert expected in err and "admit" in err and "warning:" in err


def test_a_gzip_generic_trace_replays_like_the_plain_one(workspace, tmp_path):
    plain = workspace.inputs / "trace-a.csv"
    packed = tmp_path / "trace-a.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    code, _, err = in_process("replay", "--trace", str(packed), "--cluster", str(workspace.inputs / "cluster.csv"),
                              "--out", str(tmp_path / "run"))
    assert code == 0, err
    assert (tmp_path / "run" / "events.parquet").read_bytes() == (workspace.run_a / "events.parquet").read_bytes() \
        or pq.read_table(tmp_path / "run" / "events.parquet").equals(pq.read_table(workspace.run_a / "events.parquet"))


LATIN1 = "caf\xe9".encode("latin-1")


@pytest.mark.parametrize("kind", ["generic", "generic.gz", "aaic", "openb-nodes", "queues", "pools"])
def test_a_byte_that_is_not_utf8_is_reported_with_its_line(workspace, tmp_path, kind):
    trace, cluster, queues = workspace.inputs / "trace-a.csv", workspace.inputs / "cluster.csv", None
    if kind.startswith("generic"):
        trace = tmp_path / ("trace.csv.gz" if kind.endswith("gz") else "trace.csv")
        data = b"workload_id,submit_time,duration_s,gpus_per_pod\nw1,0,60,1\nw3,0,60," + LATIN1 + b"\n"
        trace.write_bytes(gzip.compress(data) if kind.endswith("gz") else data)
    elif kind == "aaic":
        trace = tmp_path / "aaic.csv"
        trace.write_bytes(b"id, user, group, queue, nodes, gpus, walltime_req, termcode, time_submit, time_start, "
                          b"time_end, waittime, walltime\n1, 1, 1, 1, 1, 4, 60, 0, 1500000000, 1500000000, 1500000060,"
                          b" 0, 60\n" + LATIN1 + b", 1\n")
    elif kind == "openb-nodes":  # the bad byte past what format detection reads of the file
        cluster = tmp_path / "nodes.csv"
        rows = b"".join(b"n%d,1000,1024,8,A100\n" % i for i in range(1, 2000))
        cluster.write_bytes(b"sn,cpu_milli,memory_mib,gpu,model\n" + rows + LATIN1 + b",1,1,8,A100\n")
    elif kind == "queues":
        queues = tmp_path / "queues.yaml"
        queues.write_bytes(b"# queues\napiVersion: kueue.x-k8s.io/v1beta2\n# " + LATIN1 + b"\n")
    else:
        cluster = tmp_path / "pools.toml"
        cluster.write_bytes(b'[[pool]]\nname_prefix = "a"\n# ' + LATIN1 + b'\ncount = 1\ngpus = 8\ngpu_model = "A100"\n')
    argv = ["replay", "--trace", str(trace), "--cluster", str(cluster), "--out", str(tmp_path / "run")]
    code, _, err = in_process(*argv, *(["--queues", str(queues)] if queues else []))
    line = assert_one_line_error("replay", code, err)
    assert "UTF-8" in line and f"line {2001 if kind == 'openb-nodes' else 3}," in line, line


def test_the_price_book_and_the_resizes_name_the_line_of_a_byte_that_is_not_utf8(workspace, tmp_path):
    prices = tmp_path / "prices.csv"
    prices.write_bytes(PRICES.encode() + LATIN1 + b",1,1,1\n")
    code, _, err = in_process("build", str(workspace.run_a), "--prices", str(prices), "--db", str(tmp_path / "m.duckdb"))
    assert "line 4," in assert_one_line_error("build", code, err)
    resizes = tmp_path / "resizes.csv"
    resizes.write_bytes(b"workload_id,time_s,min_count\nw000,0,1\n" + LATIN1 + b",0,1\n")
    code, _, err = in_process("replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
                              str(workspace.inputs / "cluster.csv"), "--resizes", str(resizes), "--out",
                              str(tmp_path / "run"))
    assert "line 3," in assert_one_line_error("replay", code, err)


def test_a_pipe_as_input_is_read_once_not_consumed_by_format_detection(workspace, tmp_path):
    """``--trace <(zcat trace.gz)``: format detection read the pipe, the reader found it empty."""
    pipes = []
    for name, source in (("trace", workspace.inputs / "trace-a.csv"), ("cluster", workspace.inputs / "cluster.csv")):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        threading.Thread(target=lambda f=fifo, s=source: f.write_bytes(s.read_bytes()), daemon=True).start()
        pipes.append(fifo)
    code, _, err = in_process("replay", "--trace", str(pipes[0]), "--cluster", str(pipes[1]),
                              "--out", str(tmp_path / "run"), "--run-id", "a")
    assert code == 0, err
    counts = json.loads((tmp_path / "run" / "run.json").read_text())["counts"]
    assert counts["input_rows"] == 12 and counts["workloads"] == 12
    assert pq.read_table(tmp_path / "run" / "events.parquet").equals(pq.read_table(workspace.run_a / "events.parquet"))
    # the experiments read their inputs through format detection too
    pods, nodes = tmp_path / "pods", tmp_path / "nodes"
    for fifo, text in ((pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,500\np2,1000,1024,2,1000\n"),
                       (nodes, "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,V100\n")):
        os.mkfifo(fifo)
        threading.Thread(target=lambda f=fifo, t=text: f.write_text(t), daemon=True).start()
    code, out, err = in_process("experiment", "fgd", "--pods", str(pods), "--cluster", str(nodes), "--out",
                                str(tmp_path / "fgd"), "--policies", "FGD", "--no-plot", "-q")
    assert code == 0, err
    assert "from 2 rows" in out, out  # both rows read: the header was not consumed


def test_format_detection_and_reading_never_gunzip_a_whole_bomb_in_memory(workspace, tmp_path):
    """Format detection decompressed whole files in memory: 1,000 times a bomb's size. Here
    200 MiB of one endless line behind an AAIC header, 200 KiB on disk."""
    bomb = tmp_path / "aaic.csv.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as handle:
        handle.write(b"id, user, group, queue, nodes, gpus, walltime_req, termcode, time_submit, time_start, "
                     b"time_end, waittime, walltime\n")
        block = b"0" * (1 << 20)
        for _ in range(200):
            handle.write(block)
    assert bomb.stat().st_size < 1 << 20
    finished = run_cli("replay", "--trace", str(bomb), "--cluster", str(workspace.inputs / "cluster.csv"),
                       "--out", str(tmp_path / "run"), "-q")
    assert_one_line_error("replay", finished.code, finished.err)
    assert "longer than" in finished.err
    assert finished.peak_rss_mib < 400, f"peak {finished.peak_rss_mib:.0f} MiB for a 200 MiB bomb"


@pytest.mark.parametrize("value", ["1e400", "nan", "99999999999999999999999999999999999", "-1"])
def test_a_profile_time_past_the_limits_is_a_one_line_error(tmp_path, value):
    """A profile's seconds (termination_grace_s = inf) were taken as given: a victim that
    never terminates, or a float overflow later. Bounded like every time: 0 to ten years."""
    (tmp_path / "profile.toml").write_text(f'name = "p"\nunit = "pod_group"\n[behaviour]\ntermination_grace_s = {value}\n')
    (tmp_path / "trace.csv").write_text("workload_id,submit_time,duration_s,gpus_per_pod\nw1,0,10,1\n")
    (tmp_path / "cluster.csv").write_text("node,gpu_model,gpus\nn1,A100,8\n")
    code, _, err = in_process("replay", "--trace", str(tmp_path / "trace.csv"), "--cluster", str(tmp_path / "cluster.csv"),
                              "--profile", str(tmp_path / "profile.toml"), "--out", str(tmp_path / "run"))
    assert code == 2, err
    assert "behaviour.termination_grace_s" in err and "ten years" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()
