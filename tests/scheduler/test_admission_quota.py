"""The quota tree, checked against hand-computed numbers (Kueue's resource_node.go formulas;
semantics reference §4.2): what a queue can admit now (available), could ever hold
(potential), how deep it borrows, with borrowing and lending limits and nested cohorts; and
the dominant resource shares fair sharing compares."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.admission.fair_shares import FairShares
from scheduler.admission.policies import StopPolicy
from scheduler.admission.quota import QuotaOverlay, QuotaTree, usage_after_removing
from tests.scheduler.admission_state import with_flavors
from tests.scheduler.builders import make_cluster_queue, make_cohort, queue_config

GPU = ("a100", "nvidia.com/gpu")


def _tree(*objects, usage: dict[str, int] | None = None) -> QuotaTree:
    tree = QuotaTree(queue_config(*with_flavors(objects)))
    for queue, gpus in (usage or {}).items():
        tree.add(tree.queue(queue), {GPU: gpus * 1000})
    return tree


# org (own 4 GPUs) ─┬─ research ─┬─ cv   (10, lends at most 4: 6 guaranteed)
#                   │            └─ nlp  (6, borrows at most 2)
#                   └─ prod (8)
RESEARCH_ORG = (
    make_cohort("org").quota("a100", gpus=4).obj(),
    make_cohort("research").parent("org").obj(),
    make_cluster_queue("cv").cohort("research").quota("a100", gpus=10, lending_limit=4).obj(),
    make_cluster_queue("nlp").cohort("research").quota("a100", gpus=6, borrowing_limit=2).obj(),
    make_cluster_queue("prod").cohort("org").quota("a100", gpus=8).obj(),
)


def test_subtree_and_guaranteed_quota_add_up_the_lendable_parts():
    tree = _tree(*RESEARCH_ORG)
    assert {n: (tree.cohorts[n].subtree[GPU], tree.cohorts[n].guaranteed.get(GPU, 0)) for n in ("org", "research")} == {
        "research": (10_000, 0),  # cv lends 4, nlp lends all 6
        "org": (22_000, 0),  # 4 own + research 10 + prod 8
    }
    assert tree.queue("cv").guaranteed[GPU] == 6_000


@pytest.mark.parametrize(
    ("objects", "usage", "want"),
    [
        # want: queue -> (available GPUs, potential GPUs, borrowing level of 8 more GPUs)
        # level 1: the research subtree holds the extra; 2: only the whole org tree does
        pytest.param(RESEARCH_ORG, {}, {"cv": (28, 28, 0), "nlp": (8, 8, 1), "prod": (22, 22, 0)}, id="empty cluster"),
        pytest.param(RESEARCH_ORG, {"cv": 8}, {"cv": (20, 28, 1), "nlp": (8, 8, 1), "prod": (20, 22, 0)},
                     id="cv past its guaranteed 6 stores 2 in research"),
        pytest.param(RESEARCH_ORG, {"nlp": 8}, {"cv": (20, 28, 0), "nlp": (0, 8, 2), "prod": (14, 22, 0)},
                     id="nlp at nominal + borrowingLimit"),
        pytest.param(RESEARCH_ORG, {"prod": 22}, {"cv": (6, 28, 0), "nlp": (0, 8, 1), "prod": (0, 22, 2)},
                     id="lendingLimit protects cv's guaranteed 6"),
        pytest.param(RESEARCH_ORG, {"cv": 14, "prod": 4}, {"cv": (10, 28, 2), "nlp": (8, 8, 2), "prod": (10, 22, 2)},
                     id="cv borrows beyond research: the org subtree holds it"),
        pytest.param(
            (make_cluster_queue("a").cohort("org").quota("a100", gpus=4, borrowing_limit=2).obj(),
             make_cluster_queue("b").cohort("org").quota("a100", gpus=8).obj()),
            {}, {"a": (6, 6, 1), "b": (12, 12, 0)},
            id="borrowingLimit 2: a can hold its 4 and 2 of b's, never more"),
        pytest.param(
            (make_cluster_queue("a").cohort("org").quota("a100", gpus=4).obj(),
             make_cluster_queue("b").cohort("org").quota("a100", gpus=8, lending_limit=3).obj()),
            {"b": 2}, {"a": (7, 7, 1), "b": (10, 12, 1)},
            id="lendingLimit 3: b keeps 5 for itself even while it uses only 2"),
        pytest.param(
            (make_cohort("org").quota("a100", gpus=8).obj(),
             make_cohort("lab").parent("org").quota("a100", gpus=2, borrowing_limit=1).obj(),
             make_cluster_queue("a").cohort("lab").quota("a100", gpus=4).obj(),
             make_cluster_queue("b").cohort("org").quota("a100", gpus=0).obj()),
            {}, {"a": (7, 7, 2), "b": (14, 14, 2)},
            id="a nested cohort's own quota and its borrowingLimit bound what its queues can borrow"),
    ],
)
def test_available_potential_and_borrowing_level(objects, usage, want):
    tree = _tree(*objects, usage=usage)
    got = {}
    for name in want:
        queue = tree.queue(name)
        level, _ = queue.borrowing_level(GPU, 8_000)
        got[name] = (max(0, queue.available(GPU)) // 1000, queue.potential_available(GPU) // 1000, level)
    assert got == want


def test_removing_usage_restores_every_level_of_the_tree():
    tree = _tree(*RESEARCH_ORG, usage={"cv": 9, "nlp": 7, "prod": 3})
    before = {n.name: dict(n.usage) for n in (*tree.queues.values(), *tree.cohorts.values())}
    tree.add(tree.queue("cv"), {GPU: 5_000})
    tree.remove(tree.queue("cv"), {GPU: 5_000})
    assert {n.name: dict(n.usage) for n in (*tree.queues.values(), *tree.cohorts.values())} == before
    assert tree.cohorts["org"].usage[GPU] == 3_000 + 3_000 + 7_000  # prod, cv past 6, nlp


def _limited(quota: int, limit_kind: int, limit: int) -> dict[str, int]:
    return {"borrowing_limit": limit} if limit_kind == 1 else {"lending_limit": min(limit, quota)} if limit_kind == 2 else {}


_QUEUE_QUOTA = st.tuples(st.integers(0, 12), st.integers(0, 2), st.integers(0, 8))


@settings(max_examples=150, deadline=None)
@given(cv=_QUEUE_QUOTA, nlp=_QUEUE_QUOTA, prod=_QUEUE_QUOTA, org_own=st.integers(0, 6),
       research_own=st.integers(0, 6), research_lends=st.one_of(st.none(), st.integers(0, 6)),
       used=st.fixed_dictionaries({q: st.integers(0, 14) for q in ("cv", "nlp", "prod")}),
       leaving=st.lists(st.tuples(st.sampled_from(["cv", "nlp", "prod"]), st.integers(0, 14)), max_size=6),
       back=st.lists(st.booleans(), min_size=6, max_size=6))
def test_the_usage_overlay_answers_as_removing_from_the_tree_does(cv, nlp, prod, org_own, research_own, research_lends,
                                                                  used, leaving, back):
    """`usage_after_removing` (the fit checks' what-if without writing the tree) gives every
    node the usage, and every queue the available quota, that removing the same amounts one
    after another from the tree gives, on random quotas, lending and borrowing limits; and a
    `QuotaOverlay` (the victim search's) agrees with the tree after those removals and some of
    them added back newest first (the search's fill-back)."""
    research = make_cohort("research").parent("org")
    if research_lends is not None:  # a cohort's own quota, part of it lent up to org
        research = research.quota("a100", gpus=research_own, lending_limit=min(research_lends, research_own))
    tree = _tree(
        make_cohort("org").quota("a100", gpus=org_own).obj(), research.obj(),
        make_cluster_queue("cv").cohort("research").quota("a100", gpus=cv[0], **_limited(*cv)).obj(),
        make_cluster_queue("nlp").cohort("research").quota("a100", gpus=nlp[0], **_limited(*nlp)).obj(),
        make_cluster_queue("prod").cohort("org").quota("a100", gpus=prod[0], **_limited(*prod)).obj(),
        usage=used)
    # A queue gives up at most what it holds (what a real removal is).
    held = dict(used)
    removals = []
    for queue, gpus in leaving:
        gpus = min(gpus, held[queue])
        held[queue] -= gpus
        removals.append((tree.queue(queue), gpus * 1000))
    after = usage_after_removing(GPU, removals)
    nodes = [*tree.queues.values(), *tree.cohorts.values()]
    overlay = ({n.name: n.usage_after(GPU, after) for n in nodes},
               {q.name: q.available(GPU, after) for q in tree.queues.values()})
    before = {n.name: dict(n.usage) for n in nodes}
    for queue, amount in removals:
        tree.remove(queue, {GPU: amount})
    assert overlay == ({n.name: n.usage.get(GPU, 0) for n in nodes},
                       {q.name: q.available(GPU) for q in tree.queues.values()})
    for queue, amount in reversed(removals):
        tree.add(queue, {GPU: amount})
    search = QuotaOverlay()
    for queue, amount in removals:
        search.remove(queue, {GPU: amount})
    for queue, amount in removals:
        tree.remove(queue, {GPU: amount})
    for (queue, amount), add_back in zip(reversed(removals), back, strict=False):
        if add_back:
            search.add(queue, {GPU: amount})
            tree.add(queue, {GPU: amount})
    assert ({n.name: search.usage(n, GPU) for n in nodes}, {q.name: search.available(q, GPU) for q in tree.queues.values()},
            {n.name: search.within_nominal(n, [GPU]) for n in nodes}) == (
        {n.name: n.usage.get(GPU, 0) for n in nodes}, {q.name: q.available(GPU) for q in tree.queues.values()},
        {n.name: n.within_nominal([GPU]) for n in nodes})
    for (queue, amount), add_back in zip(reversed(removals), back, strict=False):
        if not add_back:
            tree.add(queue, {GPU: amount})
    assert {n.name: dict(n.usage) for n in nodes} == before  # and the overlays wrote nothing


@pytest.mark.parametrize(
    ("objects", "want_inactive"),
    [
        pytest.param((make_cluster_queue("a").quota("a100", gpus=4).stop_policy(StopPolicy.HOLD).obj(),
                      make_cluster_queue("b").quota("a100", gpus=4).obj()),
                     {"a": "ClusterQueue a is inactive (stopPolicy Hold)"}, id="stopPolicy Hold: admits nothing"),
        pytest.param((make_cohort("x").parent("y").obj(), make_cohort("y").parent("x").obj(),
                      make_cluster_queue("a").cohort("x").quota("a100", gpus=4).obj(),
                      make_cluster_queue("b").quota("a100", gpus=4).obj()),
                     {"a": "ClusterQueue a is inactive (its cohort tree has a cycle)"},
                     id="cohorts that are each other's parent disable their tree"),
    ],
)
def test_inactive_cluster_queues(objects, want_inactive):
    assert _tree(*objects).inactive == want_inactive


@pytest.mark.parametrize(
    ("weight", "borrowed", "want_share"),
    [
        pytest.param(1, 3, 250.0, id="3 of 12 lendable GPUs"),
        pytest.param(2, 6, 250.0, id="twice the weight, twice the GPUs, the same share"),
        pytest.param(2, 0, 0.0, id="not borrowing"),
        pytest.param(0, 1, math.inf, id="weight 0 while borrowing"),
    ],
)
def test_dominant_resource_share(weight, borrowed, want_share):
    tree = _tree(make_cohort("org").quota("a100", gpus=12).obj(),
                 make_cluster_queue("team").cohort("org").quota("a100", gpus=0).weight(weight).obj(),
                 usage={"team": borrowed})
    assert FairShares(tree).share(tree.queue("team")).weighted == want_share
