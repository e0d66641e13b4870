"""`gpu-finops validate --export DIR`: the FinOps Foundation's validator over a partitioned
export (it reads one file: the partitions are combined first), its known finding explained,
exit 0; found at --validator, at $GPU_FINOPS_FOCUS_VALIDATOR or as `focus-validator` on PATH,
never beside the development checkout; a validator that cannot be found or an export that is
not one: one line, exit 2."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpu_finops.cli import main
from gpu_finops.focus_validator import EXECUTABLE, VALIDATOR_ENV, find_validator
from tests.machine_lock import machine_wide_lock

# The workspace's wrapper and the focus-validator installation it makes (its own Python 3.12
# environment): what the tests use where this machine has them.
WRAPPER = Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "focus-validate"
INSTALLED = Path(os.environ.get("FOCUS_VALIDATOR_VENV", Path.home() / ".cache" / "focus-validator-2.2.1"))


def _check_output(code: int, out: str, err: str) -> None:
    if code == 2 and "Python >= 3.12" in err:
        pytest.skip("focus-validate needs Python >= 3.12, none on this machine")
    assert code == 0, out + err
    assert "FinOps Foundation focus-validator (FOCUS 1.2): Total: " in out
    for line in out.splitlines()[1:]:
        assert "known validator artefact" in line, line  # every finding explained


@pytest.mark.slow
def test_validate_export_runs_the_configured_wrapper_and_explains_its_finding(built, capsys, monkeypatch):
    if not WRAPPER.is_file():
        pytest.skip(f"the focus-validate wrapper is not on this machine ({WRAPPER})")
    monkeypatch.setenv(VALIDATOR_ENV, str(WRAPPER))
    with machine_wide_lock("focus-validator"):  # its first run installs it
        code = main(["validate", "--export", str(built.export)])
    _check_output(code, *capsys.readouterr())


@pytest.mark.slow
def test_validate_export_finds_an_installed_focus_validator_on_path(built, capsys, monkeypatch):
    executable = INSTALLED / "bin" / EXECUTABLE
    if not executable.is_file():
        pytest.skip(f"focus-validator is not installed here ({executable})")
    monkeypatch.delenv(VALIDATOR_ENV, raising=False)
    monkeypatch.setenv("PATH", f"{executable.parent}{os.pathsep}{os.environ['PATH']}")
    assert find_validator() == executable
    code = main(["validate", "--export", str(built.export)])
    _check_output(code, *capsys.readouterr())


def test_no_development_path_is_a_default(monkeypatch, tmp_path):
    monkeypatch.delenv(VALIDATOR_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no focus-validator on PATH
    with pytest.raises(Exception, match="the FOCUS validator was not found") as raised:
        find_validator()
    assert "shared" not in str(raised.value) and "focus-validator on PATH" in str(raised.value)


def test_a_missing_validator_or_export_is_one_line_and_exit_2(tmp_path, built, capsys, monkeypatch):
    monkeypatch.setenv(VALIDATOR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                               if not (Path(p) / EXECUTABLE).exists()))
    assert shutil.which(EXECUTABLE) is None
    assert main(["validate", "--export", str(built.export), "--validator", str(tmp_path / "no-such")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the FOCUS validator was not found" in err and "--validator PATH" in err
    assert str(tmp_path / "no-such") in err and str(tmp_path / "nowhere") in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["validate", "--export", str(empty), "--validator", os.devnull]) == 2
    assert "no FOCUS export here" in capsys.readouterr().err
