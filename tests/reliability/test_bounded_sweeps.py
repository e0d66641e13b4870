"""Sweeps never crash on their input, nor start runaway work (issue 24): a grid above the stated
size is refused with its count before anything is written; a scenario name too long to name a
file is one line; text of a failed scenario that looks like rich markup is printed as text (a
MarkupError ended the whole sweep and no database was built)."""

from __future__ import annotations

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
