"""showback names the window its figures cover, in the words the report and the pages use."""

from __future__ import annotations

import json

import pytest

from gpu_finops.cli import main


@pytest.mark.slow
def test_showback_names_its_window(demo_db, capsys):
    assert main(["showback", "--db", str(demo_db), "--format", "json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["window"].startswith("whole run, ") and whole["window"].endswith(" UTC")
    assert main(["showback", "--db", str(demo_db), "--phase", "steady"]) == 0
    table = capsys.readouterr().out
    assert "; steady phase, " in table.splitlines()[0]
