"""The one-way data flow is enforced, and the packages are this repository's own.

PyPI has unrelated distributions called `scheduler` and `pipeline`: if one were installed
and shadowed ours, every other test would test the wrong code.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import dashboards
import pipeline
import scheduler

REPO = Path(__file__).resolve().parents[1]


def test_packages_resolve_inside_the_repository():
    for package in (scheduler, pipeline, dashboards):
        assert Path(package.__file__).resolve().is_relative_to(REPO), package.__file__


def test_import_contracts_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is part of the dev extra"
    result = subprocess.run([lint_imports], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")
