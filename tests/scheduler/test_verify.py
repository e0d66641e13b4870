"""`replay --verify`: every fast path is checked against the plain computation, and a
shortcut broken on purpose stops the replay with a clear message.

The scenario is the demo preset cut to its first 1,500 pods, under Kueue: high-priority
inference preempts training, some gangs prefer one block, shapes park and unpark; every
kind of check runs there within seconds.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from gpu_finops.cli import EXIT_VERIFY_FAILED, main
from gpu_finops.generator import generate
from scheduler.admission import cycle_victims, flavor_assignment, kueue
from scheduler.admission.fit_certificate import FitCertificate
from scheduler.admission.flavor_screen import FlavorScreen
from scheduler.admission.preemption import classical, preemptor, search
from scheduler.admission.preemption.preemptor import Preemptor
from scheduler.admission.preemption.search import VictimSearch
from scheduler.admission.versions import FlavorResourceVersions
from scheduler.commands import replay
from scheduler.cycle import group_preemption, victim_plans
from scheduler.framework import no_fit, node_heap, pod_room
from scheduler.framework.batch import OpportunisticBatch
from scheduler.framework.node_heap import SortedScoredNodes
from scheduler.framework.node_search import PartialSearch
from scheduler.framework.status import Resource, Status
from scheduler.plugins import topology
from scheduler.queue import ShapeQueue
from scheduler.state import cluster_state
from scheduler.state.candidates import NodeCandidates
from scheduler.state.cluster_state import ClusterState
from scheduler.state.gpu_room import GpuRoom
from scheduler.state.holding_index import HoldingIndex
from scheduler.state.place_index import PlaceIndex
from scheduler.state.usage_index import UsageClass, UsageIndex
from scheduler.state.virtual_free import LevelChanges, VirtualFreeIndex
from scheduler.verify import VerificationError, Verifier
from tests.scheduler.admission_story import kueue_files
from tests.scheduler.builders import make_node, make_workload
from tests.scheduler.scenario import (
    dra_preemption,
    kube_default_without_default_spread,
    lowest_index,
    with_tie_break,
)

SEARCH_CHECK = "partial node search with inline fit checks"
HEAP_ROOT_CHECK = "heap root by pre-order rank"
NO_FIT_CHECK = "failing node search settled by the usage index"
# Every failing search of the scenario is settled by the per-model counts first: the usage
# index settles a search only where a node has the GPUs but fails another filter.
ROOM_CHECK = "failing node search settled by free GPUs per model"
PLAN_COUNT_CHECK = "failing group plan counted from free GPUs"
FLAT_COUNTS_CHECK = "native walk's int64 arrays hold the lists' counts"  # beside each search's check
WALK_ROOT_CHECK = "heap root kept during the node walk"  # beside the heap root's check
GROUP_CHECKS = {
    SEARCH_CHECK,
    ROOM_CHECK,
    FLAT_COUNTS_CHECK,
    HEAP_ROOT_CHECK,
    WALK_ROOT_CHECK,
    "GPUs held below a priority from the index",
    "group preemption ruled out by virtual free counts",
    "best topology domain from a bounded search",
    "free GPUs of a topology domain from running sums",
    "group preemption skipped as unchanged",
    "parked shape still fails",
    "victims with deferred reprieves",
    "victims planned on the view without lower priorities",
    "usable GPUs of a victim summed once per search",
    PLAN_COUNT_CHECK,
}
# Kueue's fast paths: checked under every profile (the scenario has queues).
ADMISSION_CHECKS = {"nomination reused from the per-flavor-resource cache", "preemption ruled out by quota bounds",
                    "preemption oracle answer reused per flavor-resource",
                    "preemption oracle's borrowing level on an overlay of the usage",
                    "victim search step ruled out by a running sum",
                    "flavor assignment without the oracle on doomed flavors",
                    "flavor screen per ClusterQueue and workload shape",
                    "quota fit from the cycle's victims summed per queue",
                    "quota fit once every candidate is gone, on an overlay of the usage",
                    "victim search on an overlay of the usage",
                    "victim search reading only the candidates a run can take",
                    "admission cycle skipped as idle",
                    "fitting nomination reused while its quota checks pass"}
GROUP_CHECKS |= ADMISSION_CHECKS
POD_CHECKS = ({"parked shape still fails", "pod preemption skipped as unchanged",
               "repeated eviction of a terminating victim skipped"} | ADMISSION_CHECKS)
# kube-default and its kin search from the rotating start under the heap's order
HEAP_POD_CHECKS = POD_CHECKS | {SEARCH_CHECK, FLAT_COUNTS_CHECK, HEAP_ROOT_CHECK, WALK_ROOT_CHECK, ROOM_CHECK}


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small-demo")
    preset = folder / "small.toml"
    preset.write_text('[preset]\nextends = "demo"\nmax_pods = 1500\n', encoding="utf-8")
    return generate(str(preset), folder / "in", seed=42)


def _replay(files, out, profile, verifier):
    if "\n" in profile:  # a TOML text
        out.parent.joinpath(f"{out.name}.toml").write_text(profile)
        profile = str(out.parent / f"{out.name}.toml")
    return replay(files.trace, files.cluster, out, profile=profile, seed=42, queues=files.queues, verifier=verifier)


# gang-v1.37 with scheduler preemption of DRA-claimed GPUs (KEP-5690): without it the
# replay's group preemption, and the shortcuts it takes, never run.
GANG_V137 = dra_preemption("gang-v1.37")
# kube-default without PodTopologySpread's default constraints: pods are signed, and
# OpportunisticBatching hands out hints from the kept heap (checked against the rule replayed).
BATCHING = kube_default_without_default_spread()


@pytest.mark.parametrize(("profile", "want_kinds"), [
    (GANG_V137, GROUP_CHECKS),
    ("gang-v1.37", GROUP_CHECKS - {"GPUs held below a priority from the index", "victims with deferred reprieves",
                                   "victims planned on the view without lower priorities",
                                   "group preemption ruled out by virtual free counts",
                                   "group preemption skipped as unchanged",
                                   "usable GPUs of a victim summed once per search"}),
    ("kube-default", HEAP_POD_CHECKS),
    # the batch keeps the whole heap of each search, so it pops it rather than ranking the root
    # (the searches outside a pod cycle, preemption's, all find nothing: settled, no root kept)
    (BATCHING, POD_CHECKS | {SEARCH_CHECK, FLAT_COUNTS_CHECK, ROOM_CHECK, "batch hint from the kept heap"}),
    (with_tie_break("kube-default-gpu", "random"), POD_CHECKS | {"node chosen through the usage index"}),
], ids=["pod groups: every group shortcut is checked",
        "pod groups on DRA-claimed GPUs: no group preemption, the other shortcuts are checked",
        "pods: every pod shortcut is checked",
        "signed pods: the batch's hints are checked too",
        "pods scored by GPUs with the keyed draw: the usage index is checked too"])
def test_a_verified_replay_checks_every_shortcut_and_writes_the_same_log(small_demo, tmp_path, profile, want_kinds):
    verifier = Verifier()
    _replay(small_demo, tmp_path / "verified", profile, verifier)
    _replay(small_demo, tmp_path / "plain", profile, None)
    assert set(verifier.checks) == want_kinds, verifier.summary()
    verified, plain = ((tmp_path / name / "events.parquet").read_bytes() for name in ("verified", "plain"))
    assert verified == plain



_ORIGINAL_IN_ORDER = UsageClass.in_order
_NO_GPU = Status.unschedulable("GpuFit", "Insufficient nvidia.com/gpu", short_of=Resource.GPU)
_ORIGINAL_LEVELS_IN_ORDER = UsageClass.levels_in_order

BROKEN = {
    "the held-GPU index miscounts": (
        lambda mp: mp.setattr(ClusterState, "held_below", _wrap(ClusterState.held_below, lambda v: v + 1000)),
        "GPUs held below a priority from the index"),
    "a domain's running sum drifts": (
        lambda mp: mp.setattr(topology, "domain_free_milli", _wrap(topology.domain_free_milli, lambda v: v + 1)),
        "free GPUs of a topology domain from running sums"),
    "the usage index walks nodes in the wrong order": (  # keyed ties walk all of them: the order matters to the first
        lambda mp: mp.setattr(UsageClass, "in_order", lambda self, milli, most: _ORIGINAL_IN_ORDER(self, milli, not most)),
        "node chosen through the usage index", lowest_index(GANG_V137)),
    "the usage index hands back one node of each usage level": (  # the keyed draw misses the other tied nodes
        lambda mp: mp.setattr(UsageClass, "levels_in_order", _one_node_per_level),
        "node chosen through the usage index", with_tie_break("gang-v1.37", "random")),
    "the usage index stops following the state once built": (
        lambda mp: mp.setattr(UsageIndex, "moved", lambda self, node, old_used, new_used: None),
        "node chosen through the usage index", with_tie_break("gang-v1.37", "random")),
    "the index diagnosis miscounts nodes of other GPU models": (
        lambda mp: mp.setattr(NodeCandidates, "model_node_count",
                              _wrap(NodeCandidates.model_node_count, lambda count: count - 1)),
        "node chosen through the usage index", with_tie_break("kube-default-gpu", "random")),
    "a failing node search is settled although a node fits": (  # every listed node said to fail GpuFit
        lambda mp: (_without_room(mp),
                    mp.setattr(no_fit, "first_failure", lambda filters, state, request, node: _NO_GPU)),
        NO_FIT_CHECK),
    "a settled search's diagnosis miscounts nodes of other GPU models": (
        lambda mp: (_without_room(mp), mp.setattr(NodeCandidates, "model_node_count",
                                                  _wrap(NodeCandidates.model_node_count, lambda count: count - 1))),
        NO_FIT_CHECK),
    "the per-model GPU counts settle a search in which a node has just enough GPUs": (
        lambda mp: mp.setattr(GpuRoom, "none_fits", lambda self, models, milli: _ORIGINAL_NONE_FITS(self, models, milli + 1000)),
        ROOM_CHECK),
    "the per-model GPU counts stop following shared devices": (
        lambda mp: mp.setattr(GpuRoom, "share_moved", lambda self, node, before, after: None),
        ROOM_CHECK),
    "a search settled by the per-model counts miscounts nodes of other GPU models": (
        lambda mp: mp.setattr(NodeCandidates, "model_node_count",
                              _wrap(NodeCandidates.model_node_count, lambda count: count - 1)),
        ROOM_CHECK),
    "a parked shape ignores releases": (
        lambda mp: mp.setattr(ShapeQueue, "parked", lambda self, version, now: self.parked_at >= 0 and now < self.parked_until_s),
        "parked shape still fails"),
    "reprieves are deferred even on the plan's nodes": (
        lambda mp: mp.setattr(victim_plans.RemovalPlan, "keeps_plan", lambda self, group: self._defer),
        "victims with deferred reprieves"),
    "the view without lower priorities misses the state's changes": (
        lambda mp: mp.setattr(LevelChanges, "changed", lambda self, key, priority, holding: None),
        "victims planned on the view without lower priorities"),
    "a reprieve on the view is never checked": (
        lambda mp: mp.setattr(victim_plans.ViewPlan, "reprieve", lambda self, group: True),
        "victims planned on the view without lower priorities"),
    "a victim's usable GPUs are summed wrong once per search": (
        lambda mp: mp.setattr(group_preemption, "sum_usable", _wrap(group_preemption.sum_usable,
                                                                    lambda sums: {k: v + 1 for k, v in sums.items()})),
        "usable GPUs of a victim summed once per search"),
    "a release leaves Kueue's nominations standing": (
        lambda mp: mp.setattr(FlavorResourceVersions, "bump", lambda self, frs: None),
        "nomination reused from the per-flavor-resource cache"),
    "a fitting nomination is reused although its quota checks no longer pass": (
        lambda mp: mp.setattr(FitCertificate, "holds", lambda self, queue: True),
        "fitting nomination reused while its quota checks pass"),
    "a fitting nomination is reused at another borrowing level": (  # the level is read but never compared
        lambda mp: mp.setattr(FitCertificate, "holds", _fits_at_any_level),
        "fitting nomination reused while its quota checks pass"),
    "the preemption oracle's answers outlive changes": (
        lambda mp: mp.setattr(Preemptor, "_stamp", lambda self, fr: ()),
        "preemption oracle answer reused per flavor-resource"),
    "the oracle's overlay says every queue uses more than it holds": (  # the demo's preemptors never borrow
        lambda mp: mp.setattr(preemptor, "usage_after_removing", lambda fr, leaving: _OverUsed()),
        "preemption oracle's borrowing level on an overlay of the usage"),
    "the topology sums are built late but not kept": (
        lambda mp: mp.setattr(PlaceIndex, "_build", _built_but_not_kept),
        "free GPUs of a topology domain from running sums"),
    "Kueue skips evicting a victim that is not terminating": (
        lambda mp: mp.setattr(kueue, "_already_evicted", lambda admission, victim: victim.run.holding),
        "repeated eviction of a terminating victim skipped"),
    "the virtual free index forgets lower-priority pods": (
        lambda mp: mp.setattr(VirtualFreeIndex, "pods_at_most", lambda self, priority, models, milli, enough: 0),
        "group preemption ruled out by virtual free counts"),
    "Kueue's victim search stops counting what it removed": (
        lambda mp: mp.setattr(VictimSearch, "_surely_short", lambda self, target: True),
        "victim search step ruled out by a running sum"),
    "the flavor screen is kept per ClusterQueue alone": (
        lambda mp: mp.setattr(FlavorScreen, "key", lambda self, wl, spec: (spec.name,)),
        "flavor screen per ClusterQueue and workload shape"),
    "flavor assignment skips the oracle on flavors that could preempt": (
        lambda mp: mp.setattr(flavor_assignment, "flavor_doomed", lambda *args, **kwargs: True),
        "flavor assignment without the oracle on doomed flavors"),
    "Kueue's fit check forgets the victims' quota": (
        lambda mp: mp.setattr(cycle_victims, "add_usage_by_queue", lambda tree, sums, workloads: None),
        "quota fit from the cycle's victims summed per queue"),
    "the overlay of the usage forgets what the candidates hold": (
        lambda mp: mp.setattr(classical, "usage_after_removing", lambda fr, leaving: {}),
        "quota fit once every candidate is gone, on an overlay of the usage"),
    "the fit check's overlay forgets the cycle's victims": (
        lambda mp: mp.setattr(cycle_victims, "usage_after_removing", lambda fr, leaving: {}),
        "quota fit from the cycle's victims summed per queue"),
    "Kueue's victim search forgets the candidates it took": (
        lambda mp: mp.setattr(search, "remove_on_overlay", lambda after, queue, fr, value: None),
        "victim search on an overlay of the usage"),
    "Kueue's victim search reads no source in any run": (
        lambda mp: mp.setattr(classical, "run_reads",
                              lambda preemption, wl, same_queue, advantage, allow_borrowing, bound: (False, bound)),
        "victim search reading only the candidates a run can take"),
    "the inline fit check reads the GPUs' capacity, not what is free": (
        lambda mp: mp.setattr(PartialSearch, "free_whole_gpus", lambda self, state: [n.gpus for n in state.nodes]),
        SEARCH_CHECK, "kube-default"),
    "the native walk's arrays are written one off": (
        lambda mp: mp.setattr(cluster_state, "flat", lambda value: value - 1),
        FLAT_COUNTS_CHECK),
    "the heap's root is taken as the first best node scanned": (
        lambda mp: mp.setattr(node_heap, "preorder_rank", lambda position, depth: (position, 0)),
        HEAP_ROOT_CHECK, "kube-default"),
    "the kept heap still holds the node its search chose": (
        lambda mp: mp.setattr(OpportunisticBatch, "store", _store_unpopped),
        "batch hint from the kept heap", BATCHING),
    "a group's failed preemption is never retried": (  # the retry key ignores every release and start
        lambda mp: mp.setattr(HoldingIndex, "version", lambda self, priority, models, selector=None: ()),
        "group preemption skipped as unchanged"),
    "a pod's failed preemption is never retried": (
        lambda mp: mp.setattr(HoldingIndex, "version", lambda self, priority, models, selector=None: ()),
        "pod preemption skipped as unchanged", "kube-default"),
    "the best-domain search stops before trying a domain": (  # every bound says no domain holds a pod
        lambda mp: mp.setattr(topology, "best_possible_rank", lambda state, domain, pods, milli: (0, 0, "")),
        "best topology domain from a bounded search"),
    "a failing group plan is counted one pod short": (
        lambda mp: mp.setattr(pod_room, "failing_plan", _wrap(pod_room.failing_plan, _one_pod_short)),
        PLAN_COUNT_CHECK),
    "a failing group plan is counted where nodes of every GPU model have room": (
        lambda mp: mp.setattr(GpuRoom, "pods_by_gpus", lambda self, models, whole: _ORIGINAL_PODS_BY_GPUS(self, (), whole)),
        PLAN_COUNT_CHECK),
    "an admission cycle is skipped while heads wait": (
        lambda mp: mp.setattr(kueue, "_admission_idle", lambda admission: True),
        "admission cycle skipped as idle"),
    "a quota bound rules out preemption that would make room": (
        lambda mp: mp.setattr(classical, "cannot_fit", lambda queue, usage, freeable, allow_borrowing: True),
        "preemption ruled out by quota bounds"),
}


def _fits_at_any_level(self, queue):
    return all(value <= max(0, queue.available(fr)) for group in self.groups for fr, value in group)


_ORIGINAL_STORE = OpportunisticBatch.store


def _store_unpopped(self, signature, hinted, chosen, scored, others, now):
    _ORIGINAL_STORE(self, signature, hinted, chosen, scored, others, now)
    if self.state is not None and scored:
        self.state.sorted_nodes = SortedScoredNodes(scored)


def _one_node_per_level(self, milli, most):
    for level in _ORIGINAL_LEVELS_IN_ORDER(self, milli, most):
        yield level[:1]


_ORIGINAL_NONE_FITS = GpuRoom.none_fits
_ORIGINAL_PODS_BY_GPUS = GpuRoom.pods_by_gpus


def _one_pod_short(counted):
    return counted if counted is None or not counted[0] else (counted[0] - 1, counted[1])


def _without_room(mp):
    """No search settled by the per-model counts: the usage index settles the failing ones."""
    mp.setattr(GpuRoom, "none_fits", lambda self, models, milli: False)


def _built_but_not_kept(self):
    if not self._built:  # built at the first question, but the state is never told to keep it
        _ORIGINAL_BUILD(self)
    self.kept = False


_ORIGINAL_BUILD = PlaceIndex._build


class _OverUsed(dict):
    """A usage overlay that reads far more usage on every node than there is."""

    def get(self, key, default=None):
        return 10**15


def _wrap(function, change):
    def wrapped(*args, **kwargs):
        return change(function(*args, **kwargs))
    return wrapped


@pytest.mark.parametrize("broken", list(BROKEN), ids=list(BROKEN))
def test_a_shortcut_broken_on_purpose_stops_the_verified_replay(small_demo, tmp_path, monkeypatch, broken):
    breaking, want_kind, *under = BROKEN[broken]
    profile = under[0] if under else GANG_V137
    breaking(monkeypatch)
    with pytest.raises(VerificationError, match=want_kind):
        _replay(small_demo, tmp_path / "run", profile, Verifier())
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_the_cli_reports_the_first_difference_in_one_line(small_demo, tmp_path, monkeypatch, capsys):
    BROKEN["the held-GPU index miscounts"][0](monkeypatch)
    files = small_demo
    (tmp_path / "profile.toml").write_text(GANG_V137)
    code = main(["replay", "--trace", str(files.trace), "--cluster", str(files.cluster), "--queues", str(files.queues),
                 "--profile", str(tmp_path / "profile.toml"), "--out", str(tmp_path / "run"), "--verify", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_VERIFY_FAILED
    assert len(err) == 1 and err[0].startswith("gpu-finops replay --verify: at t=")
    assert "GPUs held below a priority from the index for workload" in err[0]


def test_the_index_diagnosis_matches_a_scan_on_nodes_of_different_sizes(tmp_path):
    """The usage-index walk counts the nodes it did not visit instead of walking them, and
    looks for nodes too small for the pod only when one can be (a pod above the smallest
    node's GPUs). A verified replay compares its diagnosis with a full scan's: "wide" (8
    GPUs) finds the 8-GPU node busy and the 4-GPU nodes too small, whatever frees up."""
    nodes = [make_node("s1").gpus(4).obj(), make_node("big").obj(), make_node("s2").gpus(4).obj()]
    jobs = [make_workload("hold").at(0).runs_for(1_000).gpus(8).obj(),
            make_workload("small").at(5).runs_for(100).gpus(2).obj(),
            make_workload("wide").at(10).runs_for(100).gpus(8).obj()]
    trace, cluster, _ = kueue_files(tmp_path, nodes, jobs, [])
    verifier = Verifier()
    (tmp_path / "random.toml").write_text(with_tie_break("gang-v1.37", "random"))
    replay(trace, cluster, tmp_path / "run", profile=str(tmp_path / "random.toml"), seed=42, verifier=verifier)
    assert verifier.checks["node chosen through the usage index"] > 0
    messages = [r["message"] for r in pq.read_table(tmp_path / "run" / "events.parquet").to_pylist()
                if r["workload_id"] == "wide" and r["event"] == "pending"]
    assert "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." in messages


def _too_small_and_full(tmp_path, verifier):
    """Both 8-GPU nodes hold 6 when "wide" (8 GPUs) comes, the 4-GPU nodes are empty: 12
    GPUs are free, none fits it, and the walk visits neither of the small nodes (too small
    whatever their use): the diagnosis must still name them unresolvable."""
    nodes = [make_node("s1").gpus(4).obj(), make_node("big-1").obj(), make_node("s2").gpus(4).obj(),
             make_node("big-2").obj()]
    jobs = [make_workload("hold-1").at(0).runs_for(1_000).gpus(6).obj(),
            make_workload("hold-2").at(1).runs_for(1_000).gpus(6).obj(),
            make_workload("wide").at(10).runs_for(100).gpus(8).obj()]
    tmp_path.mkdir()
    trace, cluster, _ = kueue_files(tmp_path, nodes, jobs, [])
    (tmp_path / "random.toml").write_text(with_tie_break("gang-v1.37", "random"))
    replay(trace, cluster, tmp_path / "run", profile=str(tmp_path / "random.toml"), seed=42, verifier=verifier)


def test_the_index_diagnosis_counts_unvisited_nodes_too_small_for_the_pod(tmp_path, monkeypatch):
    verifier = Verifier()
    _too_small_and_full(tmp_path / "kept", verifier)
    assert verifier.checks["node chosen through the usage index"] > 0
    monkeypatch.setattr(NodeCandidates, "smaller_than", lambda self, models, selector, milli: [])
    with pytest.raises(VerificationError, match="node chosen through the usage index"):
        _too_small_and_full(tmp_path / "forgotten", Verifier())


def _racks_too_small(tmp_path):
    """Four racks, the largest of two 8-GPU nodes; a gang of three 8-GPU pods that requires
    one rack fits none: its message names the closest rack's two pods."""
    nodes = [make_node("a1").rack("r1").obj(), make_node("a2").rack("r1").obj(),
             make_node("b1").rack("r2").obj(), make_node("c1").rack("r3").obj(), make_node("d1").rack("r4").obj()]
    jobs = [make_workload("wide").at(0).runs_for(100).pods(3).gpus(8).topology(required="rack").obj()]
    trace, cluster, _ = kueue_files(tmp_path, nodes, jobs, [])
    return trace, cluster


def test_the_closest_domain_of_an_unplaceable_gang_is_found_by_a_bounded_search(tmp_path):
    trace, cluster = _racks_too_small(tmp_path)
    verifier = Verifier()
    replay(trace, cluster, tmp_path / "run", profile="gang-v1.37", seed=42, verifier=verifier)
    assert verifier.checks["closest topology domain from a bounded search"] > 0
    messages = {r["message"] for r in pq.read_table(tmp_path / "run" / "events.parquet").to_pylist()
                if r["workload_id"] == "wide" and r["event"] == "pending"}
    assert any("the best of 4 racks fits 2" in m for m in messages), messages


def test_a_closest_domain_search_that_stops_too_early_stops_the_verified_replay(tmp_path, monkeypatch):
    trace, cluster = _racks_too_small(tmp_path)
    monkeypatch.setattr(topology, "best_possible_rank", lambda state, domain, pods, milli: (0, 0, ""))
    with pytest.raises(VerificationError, match="closest topology domain from a bounded search"):
        replay(trace, cluster, tmp_path / "run", profile="gang-v1.37", seed=42, verifier=Verifier())


def test_a_closest_domain_from_wrong_reused_plans_stops_the_verified_replay(tmp_path, monkeypatch):
    """`closest_domain` reuses the plans `best_domain` made on the same state; plans reused
    wrong (each said to place nothing) must stop the twin that tries every domain. Rack r1's
    bound (three free 8-GPU nodes) reaches the gang's three pods, so `best_domain` plans it,
    but one node is short of CPU: it places two, as rack r2 does."""
    import csv
    from dataclasses import replace as with_fields

    from scheduler.cycle import planning

    nodes = [with_fields(make_node(name).rack(rack).obj(), cpu_milli=cpu)
             for name, rack, cpu in [("a1", "r1", 64000), ("a2", "r1", 64000), ("a3", "r1", 1000),
                                     ("b1", "r2", 64000), ("b2", "r2", 64000)]]
    jobs = [make_workload("wide").at(0).runs_for(100).pods(3).gpus(8).topology(required="rack").obj()]
    trace, cluster, _ = kueue_files(tmp_path, nodes, jobs, [])
    with open(trace, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["cpu_milli_per_pod"] = "4000"
    with open(trace, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    verifier = Verifier()
    replay(trace, cluster, tmp_path / "kept", profile="gang-v1.37", seed=42, verifier=verifier)
    assert verifier.checks["closest topology domain from a bounded search"] > 0
    real = planning.best_domain

    def forgetful(ctx, run, needed, candidates, explain, tried=None):
        best = real(ctx, run, needed, candidates, explain, tried)
        for index in tried or {}:
            tried[index] = planning.Plan()
        return best

    monkeypatch.setattr(planning, "best_domain", forgetful)
    with pytest.raises(VerificationError, match="closest topology domain from a bounded search"):
        replay(trace, cluster, tmp_path / "forgotten", profile="gang-v1.37", seed=42, verifier=Verifier())
