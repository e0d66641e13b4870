"""Sweeps never crash on their input, nor start runaway work (issue 24): a grid above the stated
size is refused with its count before anything is written; a scenario name too long to name a
file is one line; text of a failed scenario that looks like rich markup is printed as text (a
MarkupError ended the whole sweep and no database was built)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.reliability.processes import assert_one_line_error, in_process


def test_a_grid_above_the_stated_size_is_refused_with_its_count_before_anything_is_written(tmp_path):
    spec = tmp_path / "huge.toml"
    seeds = ", ".join(str(seed) for seed in range(1000))
    spec.write_text('[sweep]\nname = "huge"\n[inputs]\npreset = "tiny"\n[grid]\n'
                    f'seeds = [{seeds}]\nprofiles = ["gang-v1.37", "kube-default", "gang-v1.35"]\n'
                    'scoring = ["LeastAllocated", "MostAllocated", "BalancedAllocation", "LeastAllocated+x", "y"]\n')
    out = tmp_path / "out"
    code, _, err = in_process("sweep", str(spec), "--out", str(out), "-q")
    line = assert_one_line_error("sweep", code, err)
    assert "15,000 scenarios" in line and "10,000" in line
    assert not out.exists()


def test_a_scenario_name_too_long_for_a_file_name_is_one_line(tmp_path):
    spec = tmp_path / "long.toml"
    spec.write_text(f'[sweep]\nname = "long"\n[inputs]\npreset = "tiny"\n[[scenario]]\nname = "{"n" * 300}"\n')
    code, _, err = in_process("sweep", str(spec), "--out", str(tmp_path / "out"), "-q")
    assert "300 characters" in assert_one_line_error("sweep", code, err)
    assert not (tmp_path / "out").exists()


def test_markup_in_a_failed_scenarios_error_is_printed_as_text_and_the_others_are_built(tmp_path):
    spec = tmp_path / "markup.toml"
    spec.write_text('[sweep]\nname = "markup"\n[inputs]\npreset = "tiny"\n'
                    '[[scenario]]\nname = "good"\nprofile = "kube-default"\n'
                    '[[scenario]]\nname = "bad"\nprofile = "kube-default"\nscoring = "[/x]:x:[bold]"\n')
    out = tmp_path / "out"
    code, stdout, err = in_process("sweep", str(spec), "--out", str(out), "--workers", "1", "-q")
    assert code == 1, err  # one scenario failed, the sweep finished
    assert "Traceback" not in err and "MarkupError" not in err
    assert "[/x]:x:[bold]" in err  # shown as written, not read as markup
    assert (out / "gpu-finops.duckdb").is_file()


def test_an_address_that_is_not_ray_is_one_line_within_seconds(tmp_path):
    import socket
    import threading
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()  # answers nothing
    spec = tmp_path / "sweep.toml"
    spec.write_text('[sweep]\nname = "ray"\n[inputs]\npreset = "tiny"\n[[scenario]]\nname = "a"\n')
    began = time.monotonic()
    try:
        code, _, err = in_process("sweep", str(spec), "--out", str(tmp_path / "out"), "--executor", "ray",
                                  "--address", f"127.0.0.1:{server.getsockname()[1]}", "-q")
    finally:
        server.close()
    assert "not as a Ray cluster" in assert_one_line_error("sweep", code, err)
    assert time.monotonic() - began < 15
    assert not (tmp_path / "out").exists()


def test_sigterm_stops_the_workers_as_ctrl_c_does_and_leaves_nothing_running(tmp_path):
    import os
    import signal
    import subprocess
    import time

    from tests.reliability.processes import cli_command, environment

    trace = tmp_path / "heavy.csv"  # long enough, compiled, to be stopped while it replays
    trace.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\n"
                     + "".join(f"w{i},{i * 5},3600,1,1\n" for i in range(400_000)))
    cluster = tmp_path / "cluster.csv"
    cluster.write_text("node,gpu_model,gpus\n" + "".join(f"n{i},A100,8\n" for i in range(4)))
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                      "A100,2.0,1.5,0.8\n")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'[sweep]\nname = "term"\n[inputs]\ntrace = "{trace}"\ncluster = "{cluster}"\n'
                    f'prices = "{prices}"\n[grid]\nseeds = [1, 2]\n')
    out = tmp_path / "out"
    process = subprocess.Popen(cli_command("sweep", str(spec), "--out", str(out), "--workers", "2", "-q"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    deadline = time.monotonic() + 120
    while not list((out / "state").glob("*.running")) and time.monotonic() < deadline:
        time.sleep(0.1)
    running = list((out / "state").glob("*.running"))
    assert running, "the workers started"
    workers = [int(p.read_text().split('"pid ')[1].split('"')[0]) for p in running]
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    # the sweep's own last word (a terminated worker process may still write after it exits)
    assert "gpu-finops: interrupted" in err.strip().splitlines()
    assert not list((out / "state").glob("*.running"))
    time.sleep(0.5)
    for pid in workers:  # no worker is left replaying (gone, or a zombie waiting for its parent)
        status = Path(f"/proc/{pid}/status")
        assert not status.exists() or "State:\tZ" in status.read_text(), pid


def test_a_scenario_over_its_time_limit_is_stopped_and_recorded_as_timed_out_and_the_others_are_built(tmp_path):
    import json

    heavy = tmp_path / "heavy.csv"  # a million rows replay for a minute or more, compiled: never within the limit
    heavy.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\n"
                     + "".join(f"w{i},{i * 5},3600,1,1\n" for i in range(1_000_000)))
    light = tmp_path / "light.csv"
    light.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod\nw1,0,600,1,1\nw2,60,600,2,2\n")
    cluster = tmp_path / "cluster.csv"
    cluster.write_text("node,gpu_model,gpus\n" + "".join(f"n{i},A100,8\n" for i in range(4)))
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                      "A100,2.0,1.5,0.8\n")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'[sweep]\nname = "limit"\nscenario_timeout_s = 600\n[inputs]\ntrace = "{light}"\n'
                    f'cluster = "{cluster}"\nprices = "{prices}"\n'
                    f'[[scenario]]\nname = "endless"\ntrace = "{heavy}"\n[[scenario]]\nname = "quick"\n')
    out = tmp_path / "out"
    began = time.monotonic()
    code, stdout, err = in_process("sweep", str(spec), "--out", str(out), "--workers", "2",
                                   "--scenario-timeout", "4", "-q")
    assert code == 1, err  # one scenario did not finish: the sweep says so, and finishes
    assert time.monotonic() - began < 60
    assert "Traceback" not in err and "timed out after 4 s" in err
    state = json.loads((out / "state" / "endless.json").read_text())
    assert (state["status"], state["error"].split(" (")[0]) == ("timed_out", "timed out after 4 s")
    assert json.loads((out / "state" / "quick.json").read_text())["status"] == "ok"
    assert not list((out / "state").glob("*.running"))
    assert not (out / "runs" / "endless").exists() and not list((out / "runs").glob(".*"))  # nothing half-written
    summary = {s["name"]: s["status"] for s in json.loads((out / "sweep.json").read_text())["scenarios"]}
    assert summary == {"endless": "timed_out", "quick": "ok"}
    assert "timed out" in stdout
    import duckdb

    with duckdb.connect(str(out / "gpu-finops.duckdb"), read_only=True) as db:
        assert db.sql("select scenario, status from sweep_scenarios order by scenario").fetchall() == [
            ("endless", "timed_out"), ("quick", "ok")]


def test_a_scenario_time_limit_out_of_range_is_one_line(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nname = "x"\nscenario_timeout_s = -1\n[inputs]\npreset = "tiny"\n[[scenario]]\nname = "a"\n')
    code, _, err = in_process("sweep", str(spec), "--out", str(tmp_path / "out"), "-q")
    assert "scenario_timeout_s" in assert_one_line_error("sweep", code, err)
    code, _, err = in_process("sweep", str(spec), "--out", str(tmp_path / "out"), "--scenario-timeout", "nan")
    assert code == 2 and "Traceback" not in err
