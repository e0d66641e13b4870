"""Every figure the README and docs quote about the demo is the demo's: the marked values
(``<!-- demo:NAME -->…<!-- /demo -->``) equal what gpu_finops.docs_figures computes from the
demo's database, and the check fails when one drifts. ``make docs`` regenerates them."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from gpu_finops import docs_figures

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.fixture(scope="module")
def facts(demo_db):
    return docs_figures.read_facts(demo_db)


@pytest.mark.slow
def test_every_marked_figure_is_the_demos(facts):
    drift = {str(path.relative_to(REPO)): docs_figures.drifted(path.read_text(encoding="utf-8"), facts)
             for path in DOCS}
    assert not {k: v for k, v in drift.items() if v}, "run `make docs`"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert {"story", "explain_commands", "explained_message", "cascades"} <= {
        m.group("name") for m in docs_figures.MARKED.finditer(readme)}
    # the docs' demo figures are generated too: the fidelity table of the demo now, the
    # commitment coverage of cost-model.md, the demo's size in advice.md
    for doc, names in (("fidelity.md", {"rules_table"}), ("cost-model.md", {"committed_coverage"}),
                       ("advice.md", {"workloads", "gpus"})):
        text = (REPO / "docs" / doc).read_text(encoding="utf-8")
        assert names <= {m.group("name") for m in docs_figures.MARKED.finditer(text)}, doc


@pytest.mark.slow
def test_a_drifted_figure_fails_the_check(facts):
    text = "p95 <!-- demo:p95_wait_gang -->0.0 h<!-- /demo --> and <!-- demo:story -->old<!-- /demo -->"
    names = [name for name, _, _ in docs_figures.drifted(text, facts)]
    assert names == ["p95_wait_gang", "story"]
    assert docs_figures.drifted(docs_figures.render(text, facts), facts) == []


@pytest.mark.slow
def test_a_drifted_docs_table_fails_the_check(facts):
    table = docs_figures.FIGURES["rules_table"](facts)
    stale = table.replace("| PodsReadyTimeout requeues | ", "| PodsReadyTimeout requeues | 1")
    assert stale != table
    text = f"<!-- demo:rules_table -->{stale}<!-- /demo --> <!-- demo:committed_coverage -->4 of 32<!-- /demo -->"
    assert [name for name, _, _ in docs_figures.drifted(text, facts)] == ["rules_table", "committed_coverage"]


@pytest.mark.slow
def test_the_explained_job_really_waited_and_its_message_really_occurs(facts, demo_db):
    assert facts.explained_wait_h > 1
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        reason, message = facts.explained_message.split(" — ", 1)
        occurrences = con.execute(
            "SELECT count(*) FROM fct_workload_timeline WHERE workload_id = $w AND reason = $r "
            "AND message = $m", {"w": facts.explained, "r": reason, "m": message}).fetchone()
    finally:
        con.close()
    assert occurrences is not None and occurrences[0] > 0


def _facts(**cascades) -> docs_figures.DemoFacts:
    return docs_figures.DemoFacts(
        steady_gpu_hours={}, p95_wait_h={}, finished={}, run_ids={}, explained="", explained_wait_h=0.0,
        explained_message="", efficiency={}, unallocated_idle_cost={}, steady_idle={}, events={},
        most_preempted={}, mean_wait_h={}, workloads=0, nodes={}, **cascades)


def test_the_cascades_figure_says_what_the_chain_mart_holds():
    text = docs_figures.FIGURES["cascades"](_facts(cascades=(879, 188, 167, 40, 1108.25),
                                                   costliest_chain=("vision-training-02308", 500, 16, 57.24)))
    assert text == ("under `gang-v1.37`, the 879 preempted pod events form 188 chains; 167 of them were "
                    "preempted by a workload still recovering from its own preemption (up to 40 levels deep), "
                    "and the chains lost 1,108 GPU-hours; the costliest, started by `vision-training-02308` "
                    "(priority 500), preempted 16 pods and lost 57 GPU-hours")
    # a database built before the mart: the figure says so rather than a number
    assert "rebuild the demo" in docs_figures.FIGURES["cascades"](_facts())
