"""`make compiled`'s compile step (tools/compile_hot.py): without a C compiler it warns and
leaves the pure tree; its list of modules names files that exist and that mypy checks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _compile_hot():
    spec = importlib.util.spec_from_file_location("compile_hot", REPO / "tools" / "compile_hot.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["compile_hot"] = module
    spec.loader.exec_module(module)
    return module


def test_without_a_compiler_the_build_warns_and_stays_pure(monkeypatch, capsys):
    compile_hot = _compile_hot()
    monkeypatch.setattr(compile_hot, "_compiler", lambda: None)
    before = compile_hot.compiled_files()
    assert compile_hot.main([]) == 0
    assert "no C compiler found; the pure Python scheduler is used" in capsys.readouterr().err
    assert compile_hot.compiled_files() == before  # nothing compiled, nothing removed


def test_the_hot_modules_exist_in_the_scheduler():
    compile_hot = _compile_hot()
    assert compile_hot.HOT
    for module in compile_hot.HOT:
        assert (REPO / module).is_file(), module
        assert module.startswith("scheduler/")


def test_compiled_files_are_never_committed():
    assert "*.so" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
