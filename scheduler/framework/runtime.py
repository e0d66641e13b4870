"""The framework runtime: builds a profile's plugins and runs them at their points.

`find_node` is the whole of a kube-scheduler pod attempt on a snapshot: filter every
candidate node, score the feasible ones by the profile's weights, take the best (ties drawn
by per-node keys, `tie_keys.py`, or to the lowest node index). When nothing fits it
returns a `Diagnosis`: how many nodes failed for which reason, the raw material of every
"why pending" message. `run_permit` and `run_post_filter` run the Permit and PostFilter
plugins (interface.py has their contracts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast, overload

from scheduler.errors import InputError
from scheduler.framework import index_walk, no_fit, node_search, pod_room
from scheduler.framework.batch import OpportunisticBatch
from scheduler.framework.interface import (
    FilterPlugin,
    GroupPostFilterPlugin,
    GroupRejection,
    PermitPlugin,
    PodPostFilterPlugin,
    QueueSortPlugin,
    ScorePlugin,
)
from scheduler.framework.no_fit import index_diagnosis
from scheduler.framework.node_heap import SortedScoredNodes, heap_choice
from scheduler.framework.node_search import MODEL_MISMATCH, Diagnosis, feasible_nodes_to_find
from scheduler.framework.profile import Profile, TieBreak
from scheduler.framework.registry import in_tree_registry
from scheduler.framework.status import Status
from scheduler.framework.tie_keys import KEY_MULT, MASK, TieKeys
from scheduler.framework.victims import (
    GroupPreemptionQuery,
    NodeVictims,
    PodPreemptionQuery,
    RunningGroup,
)
from scheduler.plugins import names
from scheduler.state.cluster_state import ClusterState, PodRequest
from scheduler.verify import Verifier

T = TypeVar("T")
PARTIAL_SEARCH_CHECK = "partial node search with inline fit checks"
HEAP_ROOT_CHECK = "heap root by pre-order rank"
FLAT_COUNTS_CHECK = "native walk's int64 arrays hold the lists' counts"
WALK_ROOT_CHECK = "heap root kept during the node walk"
LISTED_WALK_CHECK = "node list walked in C under the heap's tie order"


def index_order(profile: Profile, scores: Sequence[tuple[Any, float]], count: int) -> str | None:
    """"least"/"most" when the usage index finds the node a filter scan would: the profile
    scores by GPU allocation alone (one such plugin), every node is filtered (fewer than
    100 nodes, or `percentage_of_nodes_to_score` 100) and the tie rule does not depend on
    the scan order (the keyed draw, the lowest index; not the heap's order)."""
    if profile.tie_break is TieBreak.HEAP_ORDER or len(scores) != 1:
        return None
    if feasible_nodes_to_find(profile.percentage_of_nodes_to_score, count) < count:
        return None
    return getattr(scores[0][0], "index_order", None)


class Framework:
    def __init__(self, profile: Profile, rng: random.Random, *, verifier: Verifier | None = None,
                 seed: int = 0) -> None:
        self.profile = profile
        self._rng = rng
        self._keyed = profile.tie_break is TieBreak.RANDOM
        self.ties = TieKeys(seed)  # the keyed draw among the best nodes (tie_break = random)
        self._next_start = 0  # where the next partial node search starts (percentage_of_nodes_to_score)
        self.verifier = verifier  # `replay --verify`: the usage-index walk is checked against a full scan
        # OpportunisticBatching's kept search, when the profile signs pods (`batch.py`)
        self.batch = OpportunisticBatch(verifier) if profile.signs_pods else None
        # A scorer drawing from the generator makes a repeated search draw again (`closest_domain`)
        self.draws_scores = any(name == names.RANDOM_SCORE for name, _ in profile.scores)
        self.partial: node_search.PartialSearch | None = None  # see `_partial_search_of`
        registry = in_tree_registry()

        def make(point: Mapping[str, Callable[[Mapping[str, Any], random.Random], T]], name: str) -> T:
            try:
                return point[name](profile.args(name), rng)
            except ValueError as error:  # a plugin refused its arguments
                raise InputError(profile.source or profile.name, str(error), field=f"plugin_args.{name}") from None

        self.queue_sort: QueueSortPlugin = make(registry.queue_sort, profile.queue_sort)
        self.filters: list[FilterPlugin] = [make(registry.filter, n) for n in profile.filters]
        self.scores: list[tuple[ScorePlugin, float]] = [(make(registry.score, n), w) for n, w in profile.scores]
        self.permits: list[PermitPlugin] = [make(registry.permit, n) for n in profile.permit]
        self.group_post_filters: list[GroupPostFilterPlugin] = []
        self.pod_post_filters: list[PodPostFilterPlugin] = []
        self._group_query_classes: dict[type, bool] = {}  # see `_is_group_query`
        for name in profile.post_filter:
            plugin = make(registry.post_filter, name)
            if plugin.unit is not profile.unit:
                raise InputError(profile.source or profile.name, f"post_filter plugin {name} makes room for a "
                                 f"{plugin.unit}, but the profile schedules by {profile.unit}",
                                 field="extension_points.post_filter")
            if isinstance(plugin, GroupPostFilterPlugin):
                self.group_post_filters.append(plugin)
            else:
                self.pod_post_filters.append(plugin)

    @property
    def search_start(self) -> int:
        """Where the next whole-cluster node search starts (kube-scheduler's nextStartNodeIndex)."""
        return self._next_start

    @contextmanager
    def search_start_kept(self) -> Iterator[None]:
        """Searches that leave the start index where it was: placements inside one topology
        domain (or one GPU model of a shared device claim), which a bounded search tries in
        its own order and its `--verify` twin in another; both must see the same start."""
        start = self._next_start
        try:
            yield
        finally:
            self._next_start = start

    @contextmanager
    def unobserved(self, search_start: int | None = None) -> Iterator[None]:
        """Run plugins without the run noticing: the random generator and the position of
        the partial node search are put back afterwards, and so is the attempt the tie keys
        are drawn for (`replay --verify`'s extra checks must leave the replay exactly as it
        would be without them). `search_start`: the position the checks start from (a
        twin of a computation that already moved it starts where that one started)."""
        rng_state, next_start, attempt = self._rng.getstate(), self._next_start, self.ties.attempt
        if search_start is not None:
            self._next_start = search_start
        try:
            yield
        finally:
            self._rng.setstate(rng_state)
            self._next_start = next_start
            self.ties.attempt = attempt

    def begin_attempt(self, workload: str, attempt: int, failures: int, now: float) -> None:
        """A scheduling attempt begins: the node keys of its placements derive from it. Only
        the keyed draw (`tie_break = random`) reads them, so other profiles skip the hashing."""
        if self._keyed:
            self.ties.begin_attempt(workload, attempt, failures, now)

    # -- Permit ---------------------------------------------------------------------------

    @property
    def has_permit(self) -> bool:
        """Pods of a gang wait at a Permit barrier (reserved) instead of starting one by one."""
        return bool(self.permits)

    def run_permit(self, reserved: int, min_count: int) -> Status:
        """Success when every Permit plugin lets the group run; else the first Wait."""
        for plugin in self.permits:
            status = plugin.permit(reserved, min_count)
            if not status.ok:
                return status
        return Status.success()

    @property
    def permit_timeout_s(self) -> float:
        """How long a group's reserved pods wait for the rest (the shortest plugin's)."""
        return min(plugin.timeout_s for plugin in self.permits)

    def reject_on_failure(self, unassigned: int, min_count: int) -> GroupRejection | None:
        """The first Permit plugin that rejects a waiting group now, or None."""
        for plugin in self.permits:
            rejection = plugin.reject_on_failure(unassigned, min_count)
            if rejection is not None:
                return rejection
        return None

    # -- PostFilter -------------------------------------------------------------------------

    @property
    def can_preempt(self) -> bool:
        return bool(self.group_post_filters or self.pod_post_filters)

    @property
    def post_filter_plans_by_removal(self) -> bool:
        """A group PostFilter asks about part of the lower priorities (`GroupPostFilterPlugin`)."""
        return any(plugin.plans_by_removal for plugin in self.group_post_filters)

    @property
    def post_filter_needs_loss(self) -> bool:
        return any(plugin.needs_loss for plugin in self.group_post_filters)

    @overload
    def run_post_filter(self, query: GroupPreemptionQuery) -> list[RunningGroup] | None: ...

    @overload
    def run_post_filter(self, query: PodPreemptionQuery) -> NodeVictims | None: ...

    def run_post_filter(self, query: GroupPreemptionQuery | PodPreemptionQuery) -> list[RunningGroup] | NodeVictims | None:
        """The first PostFilter plugin of the query's unit that finds victims decides."""
        if _is_group_query(query, self._group_query_classes):
            for group_plugin in self.group_post_filters:
                groups = group_plugin.select_group_victims(cast(GroupPreemptionQuery, query))
                if groups:
                    return groups
            return None
        for pod_plugin in self.pod_post_filters:
            victims = pod_plugin.select_pod_victims(cast(PodPreemptionQuery, query))
            if victims is not None:
                return victims
        return None

    # -- Filter and Score ---------------------------------------------------------------------

    def _find_by_index(self, state: ClusterState, request: PodRequest, explain: bool = True,
                       base: int = 0) -> tuple[int | None, Diagnosis | None]:
        """The node a full scan would choose, found by walking the usage index
        (`index_walk.py`); when none fits, the same diagnosis a full scan would give."""
        most, plugin = index_order(self.profile, self.scores, len(state.nodes)) == "most", self.scores[0][0]
        if self._keyed:
            table = self.ties.table(len(state.nodes))
            node, failures = index_walk.keyed(state, request, self.filters, plugin, most, base, table)
        else:
            node, failures = index_walk.by_node_index(state, request, self.filters, plugin, most)
        if node is not None or not explain:
            return node, None
        return None, index_diagnosis(state, request, failures)

    def _first_failure(self, state: ClusterState, request: PodRequest, node: int) -> Status | None:
        return index_walk.first_failure(self.filters, state, request, node)

    def feasible(self, state: ClusterState, request: PodRequest, node: int) -> bool:
        if node in state.candidates.excluded(request.selector):
            return False
        return all(f.filter(state, request, node).ok for f in self.filters)

    def _nominated_fits(self, state: ClusterState, request: PodRequest, nodes: list[int] | None, node: int) -> bool:
        """The nominated node is among the candidates (the list, the accepted GPU models)
        and passes every filter."""
        if nodes is not None and node not in nodes:
            return False
        if request.models and state.nodes[node].gpu_model not in request.models:
            return False
        return self.feasible(state, request, node)

    def find_node(
        self, state: ClusterState, request: PodRequest, nodes: list[int] | None = None,
        explain: bool = True, pod: tuple[str, int] | None = None, nominated: int | None = None,
    ) -> tuple[int | None, Diagnosis | None]:
        """The best feasible node, or None and (when `explain`) why no node fits.

        What-ifs that only need the answer pass explain=False: building the diagnosis
        touches every node. `pod` (workload, pod index): the pod being placed, whose keys
        break ties among the best nodes under `tie_break = random`. `nominated`: the pod's
        nominated node (set by its preemption); as kube-scheduler's evaluateNominatedNode,
        when it passes the filters it is taken without a scan (and the partial search's
        start does not move); a node outside `nodes` is not tried."""
        if nominated is not None and self._nominated_fits(state, request, nodes, nominated):
            return nominated, None
        base = self.ties.pod_base(pod) if self._keyed else 0
        # The usage index knows GPU counts, not devices: DRA placements take the scan.
        if nodes is None and state.dra is None and index_order(self.profile, self.scores, len(state.nodes)) is not None:
            found = self._find_by_index(state, request, explain, base)
            if self.verifier:
                scanned = self._scan(state, request, None, base)
                self.verifier.same(None, "node chosen through the usage index", _answer(found, explain),
                                   _answer(scanned, explain))
            return found
        return self._scan(state, request, nodes, base)

    def find_node_for_pod(self, state: ClusterState, request: PodRequest, pod: tuple[str, int],
                          nominated: int | None, now: float) -> tuple[int | None, Diagnosis | None]:
        """A pod cycle's Filter and Score (`schedulePod`): `find_node`, with
        OpportunisticBatching's hint under a profile that signs pods (`_find_with_batch`)."""
        if self.batch is None:
            return self.find_node(state, request, pod=pod, nominated=nominated)
        self.batch.begin_cycle()  # one pod's scheduling cycle (scheduleOne)
        return _find_with_batch(self, self.batch, state, request, nominated, now)

    def _scan(self, state: ClusterState, request: PodRequest, nodes: list[int] | None,
              base: int = 0) -> tuple[int | None, Diagnosis | None]:
        """Filter the candidate nodes, score the feasible ones, keep the best (the plain way).

        On the whole cluster, as kube-scheduler: `_scan_some`. On a list of nodes (one
        topology domain; the FGD study's candidates) every node of the list is filtered in
        its order; of the best-scoring nodes the heap's root wins (`node_heap.py`), or with
        `tie_break = random` the one of least key (`base`), or the first."""
        if nodes is None and (self.profile.tie_break is TieBreak.HEAP_ORDER
                              or feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score,
                                                        len(state.nodes)) < len(state.nodes)):
            return self._scan_some(state, request, base)
        if nodes is None:
            candidates = state.candidates.candidate_nodes(request.models, request.selector)
        else:
            excluded = state.candidates.excluded(request.selector)
            candidates = [n for n in nodes if n not in excluded] if excluded else nodes
            if len(candidates) == len(nodes) and (found := _scan_listed(self, state, request, nodes)) is not None:
                return found
        key = None
        if self._keyed:
            salts = self.ties.salts(len(state.nodes))

            def key(node: int) -> int:
                return ((base ^ salts[node]) * KEY_MULT) & MASK
        node, diagnosis = node_search.scan_nodes(self.filters, self.scores, state, request, candidates,
                                                 self.profile.tie_break is TieBreak.HEAP_ORDER, key)
        if node is None and nodes is None:
            _count_non_candidates(state, request, diagnosis)
        return node, (None if node is not None else diagnosis)

    def _scan_some(self, state: ClusterState, request: PodRequest, base: int = 0) -> tuple[int | None, Diagnosis | None]:
        """kube-scheduler's search of the whole cluster from the rotating start (`node_search.py`)."""
        if self.profile.tie_break is TieBreak.HEAP_ORDER:
            return _root_search(self, state, request)
        scored, diagnosis = _partial_search(self, state, request)
        if not scored:
            return None, diagnosis
        top = max(score for score, _ in scored)
        best = [node for score, node in scored if score == top]
        return (min(best, key=lambda node: self.ties.key(base, node)) if self._keyed else best[0]), None


def _scan_listed(framework: Framework, state: ClusterState, request: PodRequest, nodes: list[int]
                 ) -> tuple[int | None, Diagnosis | None] | None:
    """A node list (a topology domain) none of whose nodes the request's selector excludes,
    searched by the C walk (`node_search.run_listed`) for `Framework._scan` under the heap's
    tie order; None where it does not run. Under `--verify` against `scan_nodes`."""
    if framework.profile.tie_break is not TieBreak.HEAP_ORDER:
        return None
    listed = state.node_arrays.listed_nodes(nodes, request.models)
    walked = None if listed is None else node_search.run_listed(_partial_search_of(framework), state, request, listed)
    if walked is None:
        return None
    node, diagnosis = walked
    if framework.verifier is not None:
        scanned = node_search.scan_nodes(framework.filters, framework.scores, state, request, nodes, True, None)
        framework.verifier.same(None, LISTED_WALK_CHECK, _rooted(node, diagnosis, 0), _rooted(*scanned, 0))
    return node, (None if node is not None else diagnosis)


def failing_plan(framework: Framework, state: ClusterState, request: PodRequest, pending: int, needed: int,
                 explain: bool) -> tuple[int, Diagnosis | None] | None:
    """A group plan of `pending` pods that cannot place `needed`, counted where its searches
    would run from the rotating start (`Framework._scan_some`): (pods placed, the first
    failure's diagnosis when `explain`); None where the plan decides (`framework/pod_room.py`)."""
    count = len(state.nodes)
    if index_order(framework.profile, framework.scores, count) is not None or not (
            framework.profile.tie_break is TieBreak.HEAP_ORDER
            or feasible_nodes_to_find(framework.profile.percentage_of_nodes_to_score, count) < count):
        return None
    return pod_room.failing_plan(_partial_search_of(framework), state, request, pending, needed, explain)


def _find_with_batch(framework: Framework, batch: OpportunisticBatch, state: ClusterState, request: PodRequest,
                     nominated: int | None, now: float) -> tuple[int | None, Diagnosis | None]:
    """`Framework.find_node_for_pod` under a profile that signs pods: the nominated node
    when it fits, else the batch's hint when it fits, else the search from the rotating
    start, whose heap (after the chosen node's pop) the batch keeps for the next pod."""
    signature = _signature(request)

    def fits(node: int) -> bool:
        return framework._nominated_fits(state, request, None, node)

    def rescore(node: int) -> float:
        return sum(w * p.score(state, request, node) for p, w in framework.scores)

    hint = batch.hint(signature, nominated is not None, now, fits, rescore)
    if nominated is not None and fits(nominated):
        batch.store(signature, hint, nominated, None, None, now)
        return nominated, None
    if hint is not None and fits(hint):
        batch.store(signature, hint, hint, None, None, now)
        return hint, None
    scored, diagnosis = _partial_search(framework, state, request)
    if not scored:
        return None, diagnosis
    if len(scored) == 1:  # schedulePod's one-feasible-node shortcut: nothing to keep
        batch.store(signature, hint, scored[0][1], None, None, now)
        return scored[0][1], None
    heap = SortedScoredNodes(scored)
    node = heap.pop()
    batch.store(signature, hint, node, scored, heap, now)
    return node, None


def _partial_search_of(framework: Framework) -> node_search.PartialSearch:
    """The search from the rotating start over the profile's filters and scores, made once
    (what it works out from the plugins is the same for every search) and again when the
    filters change (a DRA replay wraps them after the framework is built)."""
    search = framework.partial
    if (search is None or search.filters is not framework.filters or search.scores is not framework.scores
            or search.kernel is not node_search.KERNEL):
        search = framework.partial = node_search.PartialSearch(
            framework.filters, framework.scores, framework.profile.percentage_of_nodes_to_score)
    return search


def _partial_search(framework: Framework, state: ClusterState, request: PodRequest
                    ) -> tuple[list[tuple[float, int]], Diagnosis]:
    """The search from the rotating start (`node_search.PartialSearch.run`), which moves the
    start on; under `--verify` checked against the search that calls every filter."""
    search = _partial_search_of(framework)
    start = framework._next_start
    if no_fit.settles(framework.filters, state, request):
        settled = no_fit.settled_by_room(state, request)
        if settled is not None:  # no node has the GPUs: the start stays (the search processes every node)
            if framework.verifier is not None:
                _verify_room(framework.verifier, search, state, request, start, settled)
            return [], settled
        settled = no_fit.settled_no_fit(framework.filters, state, request)
        if settled is not None:  # nothing feasible: the start stays (the search processes every node)
            if framework.verifier is not None:
                plain, plain_diagnosis, plain_next = search.run(state, request, start)
                framework.verifier.same(None, no_fit.NO_FIT_CHECK, _searched([], settled, start),
                                        _searched(plain, plain_diagnosis, plain_next))
            return [], settled
    scored, diagnosis, framework._next_start = search.run(state, request, start)
    if framework.verifier is not None and search.inline:
        plain, plain_diagnosis, plain_next = search.run_plain(state, request, start)
        framework.verifier.same(None, PARTIAL_SEARCH_CHECK, _searched(scored, diagnosis, framework._next_start),
                                _searched(plain, plain_diagnosis, plain_next))
        framework.verifier.same(None, FLAT_COUNTS_CHECK, state.flat.differences(state), [])
    return scored, diagnosis


def _root_search(framework: Framework, state: ClusterState, request: PodRequest
                 ) -> tuple[int | None, Diagnosis | None]:
    """The heap's root of the search from the rotating start, kept as the walk goes
    (`PartialSearch.run_root`), which moves the start on; under `--verify` against the root of
    the listed search (itself checked against the plain search and the heap built)."""
    search = _partial_search_of(framework)
    if no_fit.settles(framework.filters, state, request):
        settled = no_fit.settled_by_room(state, request)
        if settled is not None:  # no node has the GPUs: the start stays (the search processes every node)
            if framework.verifier is not None:
                _verify_room(framework.verifier, search, state, request, framework._next_start, settled)
            return None, settled
    node, diagnosis, next_start = search.run_root(state, request, framework._next_start)
    if framework.verifier is not None:
        scored, listed_diagnosis = _partial_search(framework, state, request)  # from the same start
        listed = _heap_root(framework.verifier, scored) if scored else None
        framework.verifier.same(None, WALK_ROOT_CHECK, _rooted(node, diagnosis, next_start),
                                _rooted(listed, listed_diagnosis, framework._next_start))
    framework._next_start = next_start
    return node, (None if node is not None else diagnosis)


def _verify_room(verifier: Verifier, search: node_search.PartialSearch, state: ClusterState, request: PodRequest,
                 start: int, settled: Diagnosis) -> None:
    """A search settled by the per-model counts (`no_fit.settled_by_room`) against the search
    it stands for (the C walk where it runs; `run` itself is checked against `run_plain` on
    every search that runs: calling every filter on every node here too made a verified
    hidden-size replay three times as long), and the counts against a recount of the state."""
    walked, walked_diagnosis, walked_next = search.run(state, request, start)
    verifier.same(None, no_fit.ROOM_CHECK,
                  (_searched([], settled, start), state.room.differences(state.whole_free, state.shared_free)),
                  (_searched(walked, walked_diagnosis, walked_next), []))


def _rooted(node: int | None, diagnosis: Diagnosis, next_start: int) -> tuple[object, ...]:
    """What the two root searches must agree on (the diagnosis when no node is feasible)."""
    if node is not None:
        return node, next_start
    return node, next_start, diagnosis.message(), sorted(diagnosis.unresolvable), sorted(diagnosis.short_of)


def _heap_root(verifier: Verifier | None, scored: list[tuple[float, int]]) -> int:
    """The heap's root (`heap_choice`), under `--verify` against the heap built."""
    node = heap_choice(scored)
    if verifier is not None:
        verifier.same(None, HEAP_ROOT_CHECK, node, SortedScoredNodes(scored).peek())
    return node


def _searched(scored: list[tuple[float, int]], diagnosis: Diagnosis, next_start: int) -> tuple[object, ...]:
    """What the two node searches must agree on (the diagnosis when no node is feasible)."""
    if scored:
        return scored, next_start
    return (scored, next_start, diagnosis.message(), sorted(diagnosis.unresolvable), sorted(diagnosis.short_of))


def _signature(request: PodRequest) -> tuple[object, ...]:
    """SignPod's answer for a pod of a profile that signs pods: what its filters and scores
    read of it (NodeResourcesFit's requests, NodeAffinity's GPU models and selector, the
    tolerations in the selector). The priority is not part of it, as upstream."""
    return (request.milli, request.cpu_milli, request.memory_mib, request.models, request.selector)


def _is_group_query(query: object, known: dict[type, bool]) -> bool:
    """isinstance(query, GroupPreemptionQuery), remembered per class: a check against a
    runtime-checkable Protocol inspects every member (slow on Python 3.11, and asked once per
    preemption attempt), and its answer depends on the query's class alone."""
    kind = type(query)
    answer = known.get(kind)
    if answer is None:
        answer = known[kind] = isinstance(query, GroupPreemptionQuery)
    return answer


def _count_non_candidates(state: ClusterState, request: PodRequest, diagnosis: Diagnosis) -> None:
    """Nodes no filter ran on: other GPU models, and nodes the pod's selector rules out."""
    mismatched = len(state.nodes) - len(state.candidates.model_nodes(request.models))
    if mismatched:
        diagnosis.reasons[MODEL_MISMATCH] += mismatched
    for reason, count in state.candidates.excluded_reasons(request.models, request.selector).items():
        diagnosis.reasons[reason] += count


def _answer(found: tuple[int | None, Diagnosis | None], explain: bool) -> tuple[object, ...]:
    """What two ways of finding a node must agree on: the node, and why none fits."""
    node: int | None = found[0]
    diagnosis = found[1]
    if node is not None or not explain or diagnosis is None:
        return (node,)
    return (node, diagnosis.message(), sorted(diagnosis.unresolvable))
