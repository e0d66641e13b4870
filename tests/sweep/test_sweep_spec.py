"""The sweep file: grids and explicit scenarios, their names, and one clear error for each
mistake (file and key)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from gpu_finops.cli import main
from gpu_finops.sweep.profiles import scenario_profile
from gpu_finops.sweep.spec import read_sweep
from scheduler.errors import InputError

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "sweep-tiny.toml"


def test_the_example_sweep_names_nine_scenarios():
    sweep = read_sweep(EXAMPLE)
    assert sweep.name == "tiny" and sweep.inputs.preset == "tiny" and sweep.charge_period_s == 3600
    assert [s.name for s in sweep.scenarios] == [
        "gang-v1.37_LeastAllocated", "gang-v1.37_MostAllocated", "kube-default_LeastAllocated",
        "kube-default_MostAllocated", "coscheduling_LeastAllocated", "coscheduling_MostAllocated",
        "gang-v1.37_no-preemption", "gang-v1.37_cheapest-loss", "kube-default_no-kueue"]
    assert {s.queues for s in sweep.scenarios} == {"inputs", "none"}
    assert sweep.run_id(sweep.scenarios[0]) == "tiny-gang-v1.37_LeastAllocated"


def test_grid_names_come_from_the_axes_that_vary(tmp_path):
    (tmp_path / "q.yaml").write_text("")
    path = tmp_path / "s.toml"
    path.write_text('[inputs]\npreset = "tiny"\n[grid]\nprofiles = ["gang-v1.37"]\nqueues = ["inputs", "q.yaml"]\n'
                    'scoring = [[["GpuPacking", 2], ["LeastAllocated", 1]]]\npreemption = ["none", "cheapest_loss"]\n'
                    'seeds = [1, 2]\n')
    sweep = read_sweep(path)
    assert sweep.name == "s"
    assert [s.name for s in sweep.scenarios][:4] == ["kueue_no-preemption_s1", "kueue_no-preemption_s2",
                                                     "kueue_cheapest_loss_s1", "kueue_cheapest_loss_s2"]
    assert sweep.scenarios[-1].name == "q_cheapest_loss_s2"
    assert sweep.scenarios[0].scoring == (("GpuPacking", 2.0), ("LeastAllocated", 1.0))
    profile = Path(scenario_profile(sweep.scenarios[2], tmp_path / "profiles"))
    derived = tomllib.loads(profile.read_text())
    assert derived["name"] == "gang-v1.37+GpuPacking2+LeastAllocated1+victims-cheapest_loss"
    assert derived["extension_points"]["score"] == [["GpuPacking", 2.0], ["LeastAllocated", 1.0]]
    assert derived["plugin_args"]["WorkloadPreemption"] == {"victim_order": "cheapest_loss"}


@pytest.mark.parametrize(("text", "field", "message"), [
    ('[inputs]\npreset = "tiny"\n[grid]\nprofile = ["x"]\n', "grid.profile", "unknown axis"),
    ('[inputs]\npreset = "tiny"\n[grid]\npreemption = ["sometimes"]\n', "grid.preemption", "must be one of"),
    ('[inputs]\npreset = "tiny"\n[grid]\nseeds = []\n', "grid.seeds", "non-empty list"),
    ('[inputs]\npreset = "tiny"\n[grid]\nscoring = [["MostAllocated", -1]]\n', "grid.scoring", "weight > 0"),
    ('[inputs]\npreset = "tiny"\n', "grid", "no scenario"),
    ('[inputs]\npreset = "tiny"\ntrace = "t.csv"\n[grid]\nseeds = [1]\n', "inputs", "exactly one of"),
    ('[inputs]\ntrace = "missing.csv"\ncluster = "c.csv"\nprices = "p.csv"\n[grid]\nseeds = [1]\n',
     "inputs.prices", "not found"),
    ('[sweep]\ncharge_period = "7m"\n[inputs]\npreset = "tiny"\n[grid]\nseeds = [1]\n', "sweep.charge_period",
     "divide a day"),
    ('[inputs]\npreset = "tiny"\n[[scenario]]\nname = "a"\n[[scenario]]\nname = "a"\n', "scenario.name", "twice"),
    ('[inputs]\npreset = "tiny"\n[[scenario]]\nprofil = "kube-default"\n', "scenario[0].profil", "unknown key"),
    ('[inputs]\npreset = "tiny"\n[extra]\n', "extra", "unknown table"),
])
def test_each_mistake_is_one_error_naming_the_key(tmp_path, text, field, message):
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_sweep(path)
    assert caught.value.field == field and message in caught.value.message and caught.value.file == "sweep.toml"


def test_cli_errors_are_one_line_and_write_no_database(tmp_path, capsys):
    path = tmp_path / "sweep.toml"
    path.write_text('[inputs]\npreset = "tiny"\n[[scenario]]\nprofile = "kube-default"\npreemption = "cheapest_loss"\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "-q"]) == 2
    error = capsys.readouterr().err
    assert "cheapest_loss" in error and "does not use" in error and error.count("\n") == 1
    assert not (tmp_path / "out" / "gpu-finops.duckdb").exists()
    path.write_text('[inputs]\npreset = "tiny"\n[grid]\nseeds = [1]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--workers", "0"]) == 2
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--executor", "ray", "--address",
                 "127.0.0.1:1", "-q"]) == 2
    assert "cannot reach a Ray cluster at '127.0.0.1:1'" in capsys.readouterr().err
