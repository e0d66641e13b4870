"""`explain --db` and `explain --run-dir` tell one workload's story in the same words: the run's
id (not its folder's name), UTC dates, the same column names."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from gpu_finops.explain import explain_run_dir
from pipeline.explain import render_timeline, workload_timeline


@pytest.mark.slow
def test_explain_from_the_database_and_from_the_run_directory_agree(demo_db):
    run_dir = demo_db.parent / "run"
    workload = "llm-training-01971"
    from_dir = io.StringIO()
    explain_run_dir(run_dir, workload, Console(file=from_dir, width=250))
    from_db = io.StringIO()
    render_timeline(workload_timeline(demo_db, workload, "demo-gang-v1.37"), Console(file=from_db, width=250))
    dir_text, db_text = from_dir.getvalue(), from_db.getvalue()
    assert dir_text.splitlines()[0] == f"{workload} (demo-gang-v1.37)"
    headers = [re.findall(r"\b(time|event|pods/node|pods|reason|message)\b", text.split("┡")[0]) for text in (dir_text, db_text)]
    assert headers[0] == headers[1] == ["time", "event", "pods/node", "reason", "message"]
    first_time = re.compile(r"│ (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")
    assert first_time.search(dir_text).group(1) == first_time.search(db_text).group(1)
