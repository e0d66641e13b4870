"""Table tests for OpportunisticBatching's rules (kubernetes `framework/runtime/batch.go`:
`GetNodeHint`, `batchStateCompatible`, `refreshHintCandidates`, `StoreScheduleResults`),
one case per rule, on `scheduler/framework/batch.py`; and which profiles sign pods."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler.framework.batch import OpportunisticBatch, plain_hint
from scheduler.framework.interface import Unit
from scheduler.framework.node_heap import SortedScoredNodes
from scheduler.framework.profile import Profile, TieBreak, load_profile
from scheduler.verify import VerificationError, Verifier

SIG, OTHER_SIG = ("8 GPUs",), ("7 GPUs",)
# The first pod's search: four nodes tied; it chose node 0 (the heap's root).
SCANNED = [(100.0, 0), (100.0, 1), (100.0, 2), (100.0, 3)]


def never(node: int) -> bool:
    return False


def no_score(node: int) -> float:
    raise AssertionError("only a node that still fits is rescored")


def seeded(verifier: Verifier | None = None, signature: tuple[str, ...] | None = SIG) -> OpportunisticBatch:
    """A batch after one successful cycle at t=0 whose search chose node 0."""
    batch = OpportunisticBatch(verifier)
    batch.begin_cycle()
    heap = SortedScoredNodes(SCANNED)
    chosen = heap.pop()
    batch.store(signature, None, chosen, SCANNED, heap, 0.0)
    batch.begin_cycle()
    return batch


def test_the_next_pod_of_the_same_signature_gets_the_kept_heap_s_next_pop():
    # heap.Pop swapped node 3 to the root, where its tied children leave it
    assert seeded().hint(SIG, False, 0.0, never, no_score) == 3


@pytest.mark.parametrize(("case", "signature", "nominated", "now", "cycles_between"), [
    ("another signature", OTHER_SIG, False, 0.0, 0),
    ("an unsignable pod", None, False, 0.0, 0),
    ("a pod with a nominated node", SIG, True, 0.0, 0),
    ("a batch older than 500 ms", SIG, False, 0.51, 0),
    ("a failed cycle in between (it stored nothing)", SIG, False, 0.0, 1),
])
def test_no_hint(case, signature, nominated, now, cycles_between):
    batch = seeded()
    for _ in range(cycles_between):
        batch.begin_cycle()
    assert batch.hint(signature, nominated, now, never, no_score) is None


def test_a_batch_exactly_500_ms_old_still_hints():
    assert seeded().hint(SIG, False, 0.5, never, no_score) == 3


def test_the_last_chosen_node_that_still_fits_is_rescored_and_competes_again():
    """Node 0 still fits and now scores best: the heap rebuilt over [3, 1, 2] + node 0 puts
    it back at the root, so the hint is node 0 again."""
    def fits(node: int) -> bool:
        return node == 0

    assert seeded().hint(SIG, False, 0.0, fits, lambda node: 200.0) == 0


def test_a_taken_hint_keeps_the_state_and_the_next_pod_gets_the_next_pop():
    batch = seeded()
    hint = batch.hint(SIG, False, 0.0, never, no_score)
    batch.store(SIG, hint, hint, None, None, 0.0)
    batch.begin_cycle()
    assert (hint, batch.hint(SIG, False, 0.1, never, no_score), batch.hints_taken) == (3, 2, 1)


def test_a_hint_not_taken_gives_way_to_the_new_search_s_heap():
    batch = seeded()
    batch.hint(SIG, False, 0.0, never, no_score)
    scanned = [(50.0, 7), (90.0, 8)]
    heap = SortedScoredNodes(scanned)
    batch.store(SIG, 3, heap.pop(), scanned, heap, 0.2)
    batch.begin_cycle()
    assert batch.hint(SIG, False, 0.6, never, no_score) == 7  # the new state is 0.4 s old


@pytest.mark.parametrize(("case", "signature", "others"), [
    ("one feasible node: no heap", SIG, None),
    ("the other nodes' heap is empty", SIG, SortedScoredNodes([])),
    ("the pod has no signature", None, SortedScoredNodes([(1.0, 5)])),
])
def test_nothing_is_kept(case, signature, others):
    batch = seeded()
    batch.store(signature, None, 9, None, others, 0.0)
    batch.begin_cycle()
    assert (batch.state, batch.hint(SIG, False, 0.0, never, no_score)) == (None, None)


def test_the_kept_heap_equals_the_rule_replayed_from_the_search():
    verifier = Verifier()
    batch = seeded(verifier)
    hints = []
    for step in range(3):
        hint = batch.hint(SIG, False, 0.0, lambda node: node == 3, lambda node, step=step: 10.0 * step)
        hints.append(hint)
        batch.store(SIG, hint, hint, None, None, 0.0)
        batch.begin_cycle()
    assert hints == [3, 2, 1]
    assert verifier.checks["batch hint from the kept heap"] == 3


def test_a_kept_heap_that_was_never_popped_fails_the_check():
    """The first search's chosen node left in the kept heap: the check names the rule."""
    batch = seeded(Verifier())
    assert batch.state is not None
    batch.state.sorted_nodes = SortedScoredNodes(SCANNED)
    with pytest.raises(VerificationError, match="batch hint from the kept heap"):
        batch.hint(SIG, False, 0.0, never, no_score)


def test_the_plain_rule_pops_the_search_s_choice_first():
    assert plain_hint(SCANNED, [(-1, 0.0)]) == 3


def _with(profile: Profile, **changes: object) -> Profile:
    return dataclasses.replace(profile, **changes)  # type: ignore[arg-type]


SIGNING = _with(load_profile("kube-default-gpu"), default_topology_spread=False)


@pytest.mark.parametrize(("case", "profile", "signs"), [
    ("every shipped profile: default topology spread (or DRA claims) refuses", None, False),
    ("a pod profile without default constraints", SIGNING, True),
    ("the feature gate off", _with(SIGNING, opportunistic_batching=False), False),
    ("pod groups", _with(SIGNING, unit=Unit.POD_GROUP), False),
    ("ties by another rule than the heap's", _with(SIGNING, tie_break=TieBreak.RANDOM), False),
    ("GPUs claimed through DRA", _with(SIGNING, group_device_claim=True), False),
    ("scheduler-plugins' Coscheduling", _with(SIGNING, queue_sort="Coscheduling"), False),
])
def test_which_profiles_sign_pods(case, profile, signs):
    from scheduler.framework.profile import shipped_profiles

    profiles = [load_profile(name) for name in shipped_profiles()] if profile is None else [profile]
    assert {p.signs_pods for p in profiles} == {signs}


@pytest.mark.parametrize("key", ["opportunistic_batching", "default_topology_spread"])
def test_a_batching_switch_that_is_not_a_boolean_names_the_file_and_field(tmp_path, key):
    from scheduler.errors import InputError

    path = tmp_path / "mine.toml"
    path.write_text(f'name = "mine"\nunit = "pod"\n[behaviour]\n{key} = "yes"\n')
    with pytest.raises(InputError) as raised:
        load_profile(str(path))
    assert "mine.toml" in str(raised.value) and f"behaviour.{key}" in str(raised.value)
    assert "true or false" in str(raised.value)
