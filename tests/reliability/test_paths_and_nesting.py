"""Paths read from input files and TOML nested past the parser's recursion (issue 41): one line
naming the file (and the field), exit 2, never ``ValueError: embedded null byte`` nor a
RecursionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.processes import assert_one_line_error, in_process

DEEP = "x = " + "[" * 500 + "]" * 500 + "\n"  # tomllib recurses once per level


def _sweep(folder: Path, inputs: str, grid: str = 'profiles = ["gang-v1.37"]') -> Path:
    path = folder / "sweep.toml"
    path.write_text(f'[sweep]\nname = "t"\n[inputs]\n{inputs}\n[grid]\n{grid}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("where", ["grid", "inputs"])
def test_a_nul_byte_in_a_sweep_path_is_one_line(workspace, tmp_path, where):
    """Before: the grid's profile path gave ``ValueError: embedded null byte`` (a traceback)."""
    files = "\n".join(f'{key} = "{workspace.inputs / name}"' for key, name in
                      (("trace", "trace-a.csv"), ("cluster", "cluster.csv"), ("prices", "prices.csv")))
    if where == "grid":
        spec = _sweep(tmp_path, files, 'profiles = ["gang-v1.37", "mine\\u0000.toml"]')
    else:
        spec = _sweep(tmp_path, files.replace("trace-a.csv", "trace\\u0000-a.csv"))
    code, _, err = in_process("sweep", str(spec), "--out", str(tmp_path / "out"))
    line = assert_one_line_error("sweep", code, err)
    assert "sweep.toml" in line and "NUL byte" in line, line
    assert not (tmp_path / "out").exists()


def test_a_nul_byte_in_a_reports_file_path_is_one_line(tmp_path):
    config = tmp_path / "reports.toml"
    config.write_text('[[report]]\nname = "weekly"\ncron = "0 6 * * 1"\ndb = "costs\\u0000.duckdb"\n'
                      'out = "reports/{name}"\n', encoding="utf-8")
    code, _, err = in_process("schedule", "--config", str(config), "--dry-run")
    line = assert_one_line_error("schedule", code, err)
    assert "reports.toml" in line and "NUL byte" in line, line


def test_a_nul_byte_in_an_argument_is_one_line(tmp_path):
    code, _, err = in_process("sweep", str(tmp_path / "a\0b.toml"), "--out", str(tmp_path / "out"))
    assert "NUL byte" in assert_one_line_error("sweep", code, err)


def _toml_readers(workspace, deep: Path, tmp_path: Path) -> dict[str, list[str]]:
    inputs = workspace.inputs
    replay = ["replay", "--trace", str(inputs / "trace-a.csv"), "--cluster", str(inputs / "cluster.csv"),
              "--out", str(tmp_path / "run")]
    return {
        "sweep": ["sweep", str(deep), "--out", str(tmp_path / "out")],
        "replay --profile": [*replay[:-2], "--profile", str(deep), *replay[-2:]],
        "replay --cluster": ["replay", "--trace", str(inputs / "trace-a.csv"), "--cluster", str(deep),
                             "--out", str(tmp_path / "run")],
        "schedule": ["schedule", "--config", str(deep), "--dry-run"],
        "generate --preset": ["generate", "--preset", str(deep), "--out", str(tmp_path / "gen")],
    }


@pytest.mark.parametrize("reader", ["sweep", "replay --profile", "replay --cluster", "schedule", "generate --preset"])
def test_toml_nested_500_deep_is_one_line_naming_the_file(workspace, tmp_path, reader):
    """Before: RecursionError tracebacks in the sweep, schedule and profile readers."""
    deep = tmp_path / "deep.toml"
    deep.write_text(DEEP, encoding="utf-8")
    argv = _toml_readers(workspace, deep, tmp_path)[reader]
    code, _, err = in_process(*argv)
    line = assert_one_line_error(argv[0], code, err)
    assert "deep.toml" in line and "nested too deeply" in line, line
