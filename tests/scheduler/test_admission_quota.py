"""Quota arithmetic over a cohort tree, checked against hand-computed numbers (Kueue's
resource_node.go formulas), and dominant resource shares."""

from __future__ import annotations

import math

import pytest

from scheduler.admission import parse_queue_config
from scheduler.admission.fair_sharing import FairShares
from scheduler.admission.quota import QuotaTree

GPU = ("a100", "nvidia.com/gpu")


def _cq(name: str, parent: str, quota: str) -> str:
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
        f"spec:\n  cohortName: {parent}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
        f"    flavors: [{{name: a100, resources: [{{name: nvidia.com/gpu, {quota}}}]}}]\n"
    )


# org (own 4 GPUs) ─┬─ research ─┬─ cv   (10, lends at most 4: 6 guaranteed)
#                   │            └─ nlp  (6, borrows at most 2)
#                   └─ prod (8)
TREE = "---\n".join([
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\nspec:\n  resourceGroups:\n"
    "  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}\nspec: {parentName: org}\n",
    _cq("cv", "research", "nominalQuota: 10, lendingLimit: 4"),
    _cq("nlp", "research", "nominalQuota: 6, borrowingLimit: 2"),
    _cq("prod", "org", "nominalQuota: 8"),
])


def _tree(usage: dict[str, int]) -> QuotaTree:
    tree = QuotaTree(parse_queue_config(TREE))
    for queue, gpus in usage.items():
        tree.add(tree.queue(queue), {GPU: gpus * 1000})
    return tree


def test_subtree_and_guaranteed_quota_add_up_the_lendable_parts():
    tree = _tree({})
    assert {n: (tree.cohorts[n].subtree[GPU], tree.cohorts[n].guaranteed.get(GPU, 0)) for n in ("org", "research")} == {
        "research": (10_000, 0),  # cv lends 4, nlp lends all 6
        "org": (22_000, 0),  # 4 own + research 10 + prod 8
    }
    assert tree.queue("cv").guaranteed[GPU] == 6_000


@pytest.mark.parametrize(
    ("usage", "want"),
    [
        # level 1: the research subtree holds the extra; 2: only the whole org tree does
        pytest.param({}, {"cv": (28, 28, 0), "nlp": (8, 8, 1), "prod": (22, 22, 0)}, id="empty cluster"),
        pytest.param({"cv": 8}, {"cv": (20, 28, 1), "nlp": (8, 8, 1), "prod": (20, 22, 0)},
                     id="cv past its guaranteed 6 stores 2 in research"),
        pytest.param({"nlp": 8}, {"cv": (20, 28, 0), "nlp": (0, 8, 2), "prod": (14, 22, 0)},
                     id="nlp at nominal + borrowingLimit"),
        pytest.param({"prod": 22}, {"cv": (6, 28, 0), "nlp": (0, 8, 1), "prod": (0, 22, 2)},
                     id="lendingLimit protects cv's guaranteed 6"),
        pytest.param({"cv": 14, "prod": 4}, {"cv": (10, 28, 2), "nlp": (8, 8, 2), "prod": (10, 22, 2)},
                     id="cv borrows beyond research: the org subtree holds it"),
    ],
)
def test_available_potential_and_borrowing_level(usage, want):
    # want: queue -> (available GPUs, potential GPUs, borrowing level of 8 more GPUs)
    tree = _tree(usage)
    got = {}
    for name in want:
        queue = tree.queue(name)
        level, _ = queue.borrowing_level(GPU, 8_000)
        got[name] = (max(0, queue.available(GPU)) // 1000, queue.potential_available(GPU) // 1000, level)
    assert got == want


def test_removing_usage_restores_every_level_of_the_tree():
    tree = _tree({"cv": 9, "nlp": 7, "prod": 3})
    before = {n.name: dict(n.usage) for n in (*tree.queues.values(), *tree.cohorts.values())}
    tree.add(tree.queue("cv"), {GPU: 5_000})
    tree.remove(tree.queue("cv"), {GPU: 5_000})
    assert {n.name: dict(n.usage) for n in (*tree.queues.values(), *tree.cohorts.values())} == before
    assert tree.cohorts["org"].usage[GPU] == 3_000 + 3_000 + 7_000  # prod, cv past 6, nlp


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
    manifests = "---\n".join([
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\nspec:\n  resourceGroups:\n"
        "  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 12}]}]\n",
        _cq("team", "org", "nominalQuota: 0").replace("spec:\n", f"spec:\n  fairSharing: {{weight: {weight}}}\n"),
    ])
    tree = QuotaTree(parse_queue_config(manifests))
    tree.add(tree.queue("team"), {GPU: borrowed * 1000})
    assert FairShares(tree).share(tree.queue("team")).weighted == want_share
