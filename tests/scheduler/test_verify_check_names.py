"""The `--verify` checks the scheduler makes, the ones `scheduler.verify.CHECKS` lists, and the
twins docs/fast-paths.md names are the same set; each check has a test that breaks its
fast path on purpose and a test named on the page exists.

The sources are read, not run: a check name is a string passed as the name of a
`Verifier.same` / `ClockedVerifier.same` / `Verifier.fail` call, a module constant ending in
`_CHECK`, or the default of a `same` method's `what` parameter.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from scheduler.verify import CHECKS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "fast-paths.md"
TWIN_COLUMN = "`--verify` twin"
BROKEN_COLUMN = "broken on purpose"


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _names_in(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"same", "fail"}:
            args = node.args
            if node.func.attr == "same" and args and _text(args[0]) is not None:  # ClockedVerifier.same(what, …)
                names.add(_text(args[0]) or "")
            elif len(args) > 1 and _text(args[1]) is not None:  # Verifier.same(now, what, …), fail(now, what, …)
                names.add(_text(args[1]) or "")
            names.update(_text(k.value) or "" for k in node.keywords if k.arg == "what" and _text(k.value))
        elif isinstance(node, ast.Assign) and _text(node.value) is not None:
            if any(isinstance(t, ast.Name) and t.id.endswith("_CHECK") for t in node.targets):
                names.add(_text(node.value) or "")
        elif isinstance(node, ast.FunctionDef) and node.name == "same":
            positional = node.args.args[len(node.args.args) - len(node.args.defaults):]
            for argument, default in [*zip(positional, node.args.defaults, strict=True),
                                      *zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)]:
                if argument.arg == "what" and _text(default) is not None:
                    names.add(_text(default) or "")
    return names


def checks_in_sources() -> set[str]:
    names: set[str] = set()
    for path in sorted((ROOT / "scheduler").rglob("*.py")):
        if path.name != "verify.py":
            names |= _names_in(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return names


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def page_columns(column: str) -> list[str]:
    """The cells of `column` in every table of the page whose header has it."""
    found: list[str] = []
    index: int | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            index = None
            continue
        cells = _cells(line)
        if index is None:
            index = cells.index(column) if column in cells else -1
        elif index >= 0 and not set(cells[index]) <= set("-: "):
            found.append(cells[index])
    return found


def test_every_check_the_scheduler_makes_is_listed_and_every_listed_check_is_made():
    in_sources = checks_in_sources()
    assert in_sources - CHECKS == set(), "checks made but not in scheduler.verify.CHECKS"
    assert CHECKS - in_sources == set(), "listed in scheduler.verify.CHECKS but made nowhere"


def test_the_fast_paths_page_names_every_check_once():
    named = [name for cell in page_columns(TWIN_COLUMN) for name in re.findall(r'"([^"]+)"', cell)]
    assert len(named) == len(set(named)), "a twin named twice on docs/fast-paths.md"
    assert set(named) - CHECKS == set(), "docs/fast-paths.md names a twin that does not exist"
    assert CHECKS - set(named) == set(), "a --verify check docs/fast-paths.md does not describe"


def test_every_check_has_a_test_that_breaks_its_fast_path_on_purpose():
    tests = [path.read_text(encoding="utf-8") for path in (ROOT / "tests").rglob("test_*.py")]
    breaking = [text for text in tests if "pytest.raises(VerificationError" in text]
    assert {name for name in CHECKS if not any(name in text for text in breaking)} == set()


def test_the_tests_the_page_names_exist():
    named = {name for cell in page_columns(BROKEN_COLUMN) for name in re.findall(r"`(test_\w+)`", cell)}
    assert named, "docs/fast-paths.md names no test"
    defined = {name for path in (ROOT / "tests").rglob("test_*.py")
               for name in re.findall(r"^def (test_\w+)\(", path.read_text(encoding="utf-8"), re.MULTILINE)}
    assert named - defined == set()
