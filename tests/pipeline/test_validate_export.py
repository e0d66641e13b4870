"""`gpu-finops validate --export DIR`: the FinOps Foundation's validator over a partitioned
export (it reads one file: the partitions are combined first), its known finding explained,
exit 0; a validator that cannot be found or an export that is not one: one line, exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpu_finops.cli import main
from gpu_finops.focus_validator import VALIDATOR_ENV, find_validator

CHECKOUT_VALIDATOR = Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "focus-validate"


def _validator() -> Path | None:
    try:
        return find_validator()
    except Exception:
        return None


@pytest.mark.slow
def test_validate_export_runs_the_validator_and_explains_its_finding(built, capsys):
    validator = _validator()
    if validator is None:
        pytest.skip(f"focus-validate not found beside the checkout ({CHECKOUT_VALIDATOR}) nor in ${VALIDATOR_ENV}")
    code = main(["validate", "--export", str(built.export)])
    out, err = capsys.readouterr()
    if code == 2 and "Python >= 3.12" in err:
        pytest.skip("focus-validate needs Python >= 3.12, none on this machine")
    assert code == 0, out + err
    assert "FinOps Foundation focus-validator (FOCUS 1.2): Total: " in out
    for line in out.splitlines()[1:]:
        assert "known validator artefact" in line, line  # every finding explained


def test_a_missing_validator_or_export_is_one_line_and_exit_2(tmp_path, built, capsys, monkeypatch):
    monkeypatch.setenv(VALIDATOR_ENV, str(tmp_path / "nowhere"))
    assert main(["validate", "--export", str(built.export), "--validator", str(tmp_path / "no-such")]) in (0, 2)
    err = capsys.readouterr().err
    if not CHECKOUT_VALIDATOR.is_file():
        assert err.count("\n") == 1 and "focus-validate not found" in err and "--validator PATH" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["validate", "--export", str(empty), "--validator", os.devnull]) == 2
    assert "no FOCUS export here" in capsys.readouterr().err
