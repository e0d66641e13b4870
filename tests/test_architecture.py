"""The one-way data flow is enforced, the packages are this repository's own, imports form
no cycle, and no module or class grows past what a reader can hold.

PyPI has unrelated distributions called `scheduler` and `pipeline`: if one were installed
and shadowed ours, every other test would test the wrong code.
"""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import dashboards
import pipeline
import scheduler

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("scheduler", "pipeline", "dashboards", "gpu_finops")
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 250
# The pipeline may read exactly this of the scheduler: its published event-log contract (the
# schema, the folder swap that makes a run folder the old one or the new one, never half, and
# the rule that neutralises control characters in the log's text before a terminal shows it).
PIPELINE_MAY_IMPORT_FROM_SCHEDULER = {"scheduler.eventlog.schema", "scheduler.eventlog.files",
                                      "scheduler.eventlog.text", "scheduler.eventlog.writes"}
# The dashboard may import only the rules every stage shares (the write discipline, the folder
# swap, printable text), which import no other part of the scheduler.
DASHBOARD_MAY_IMPORT_FROM_SCHEDULER = {"scheduler.eventlog.files", "scheduler.eventlog.text",
                                       "scheduler.eventlog.writes"}


def test_packages_resolve_inside_the_repository():
    for package in (scheduler, pipeline, dashboards):
        assert Path(package.__file__).resolve().is_relative_to(REPO), package.__file__


def test_import_contracts_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is part of the dev extra"
    result = subprocess.run([lint_imports], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """Every import of the four packages, lazy (inside functions) and TYPE_CHECKING ones too."""
    return grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_anywhere(graph):
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_cycles_and_only_cycles():
    graph = grimp.ImportGraph()
    for importer, imported in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d"), ("f", "a")]:
        graph.add_import(importer=importer, imported=imported)
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_the_pipeline_imports_only_the_published_schema_of_the_scheduler(graph):
    reached = {imported for importer in graph.find_children("pipeline") | {"pipeline"}
               for module in [importer, *graph.find_descendants(importer)]
               for imported in graph.find_modules_directly_imported_by(module)
               if imported.split(".")[0] == "scheduler"}
    assert reached <= PIPELINE_MAY_IMPORT_FROM_SCHEDULER, sorted(reached - PIPELINE_MAY_IMPORT_FROM_SCHEDULER)


def test_the_dashboard_imports_only_the_shared_rules_of_the_scheduler(graph):
    reached = {imported for module in [*graph.find_descendants("dashboards"), "dashboards"]
               for imported in graph.find_modules_directly_imported_by(module)
               if imported.split(".")[0] == "scheduler"}
    assert reached <= DASHBOARD_MAY_IMPORT_FROM_SCHEDULER, sorted(reached - DASHBOARD_MAY_IMPORT_FROM_SCHEDULER)
    for shared in DASHBOARD_MAY_IMPORT_FROM_SCHEDULER:  # and they reach nothing else of it
        further = {m for m in graph.find_modules_directly_imported_by(shared) if m.split(".")[0] == "scheduler"}
        assert further <= DASHBOARD_MAY_IMPORT_FROM_SCHEDULER, (shared, sorted(further))


def _python_files():
    for package in (*PACKAGES, "benchmarks"):
        yield from sorted((REPO / package).rglob("*.py"))


def test_no_module_is_longer_than_a_reader_can_hold():
    long = {str(p.relative_to(REPO)): n for p in _python_files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_class_is_longer_than_a_reader_can_hold():
    long = {}
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and (size := node.end_lineno - node.lineno + 1) > MAX_CLASS_LINES:
                long[f"{path.relative_to(REPO)}:{node.name}"] = size
    assert long == {}
