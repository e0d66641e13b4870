"""The sample cluster dumps under data/cluster-dumps/ are the importer tests' own dumps (made by
tests/importers/cluster_dumps.py), and the README's import tour on them runs as written:
import, replay, build, without a warning about what the import wrote."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.importers.cluster_dumps import write_dumps

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "data" / "cluster-dumps"


def test_the_bundled_dumps_are_the_tests_dumps(tmp_path):
    fresh = write_dumps(tmp_path)
    for path in fresh.values():
        assert (BUNDLED / path.name).read_bytes() == path.read_bytes(), (
            f"data/cluster-dumps/{path.name} differs from cluster_dumps.write_dumps(): regenerate it")


def _tour() -> list[list[str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- import-tour -->\n```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has no import tour block"
    text = block.group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in text.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_readmes_import_tour_runs_on_the_bundled_dumps(tmp_path):
    (tmp_path / "data").symlink_to(REPO / "data")
    for argv in _tour():
        assert argv[0] == "gpu-finops"
        done = subprocess.run([sys.executable, "-m", "gpu_finops.cli", *argv[1:]], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
        assert "LocalQueue name" not in done.stderr, done.stderr  # the import's own queue names
    assert (tmp_path / "sample.duckdb").is_file()
