"""GPUs freed for a preemptor stay its own while its victims terminate.

kube-scheduler nominates the preemptor's node (`nominatedNodeName`) and, from then on,
filters every pod of lower priority as if the nominated pod were already there
(pkg/scheduler/framework/runtime/framework.go: RunFilterPluginsWithNominatedPods and
addGENominatedPods); pods of higher priority ignore the nomination, and the nomination is
cleared when the preemptor binds or when a later attempt of it finds nothing to preempt.
Without it, GPUs that come free during the grace period go to whichever lower-priority
pod the queue tries first, and the preemptor preempts again, and again."""

from tests.scheduler.scenario import (
    GANG_V137_PREEMPTING,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

NODES = [node("n1"), node("n2")]


def _placement(rows):
    return story(rows, events=("started", "preempted", "requeued", "finished"))


def test_a_lower_priority_pod_waits_while_gpus_are_kept_for_a_preemptor(tmp_path):
    # urgent needs both nodes; low-b finishes on its own during the grace period and the
    # pending filler (lower priority) must not take n2 from the preemptor.
    rows = replay_rows(tmp_path, NODES, [
        job("low-a", 0, 5000, priority=1), job("low-b", 0, 110, priority=1),
        job("filler", 50, 1000, priority=1), job("urgent", 100, 50, pods=2, priority=9)], lowest_index(GANG_V137_PREEMPTING))
    assert _placement(rows) == [
        (0.0, "started", "low-a", 0, "n1"),
        (0.0, "started", "low-b", 0, "n2"),
        (110.0, "finished", "low-b", 0, "n2"),
        (130.0, "preempted", "low-a", 0, "n1"),
        (130.0, "requeued", "low-a", None, None),
        (130.0, "started", "urgent", 0, "n1"),
        (130.0, "started", "urgent", 1, "n2"),
        (180.0, "finished", "urgent", 0, "n1"),
        (180.0, "finished", "urgent", 1, "n2"),
        (180.0, "started", "filler", 0, "n1"),
        (180.0, "started", "low-a", 0, "n2"),
        (1180.0, "finished", "filler", 0, "n1"),
        (5180.0, "finished", "low-a", 0, "n2"),
    ]
    assert sum(r["event"] == "preempted" for r in rows) == 1


def test_a_higher_priority_pod_ignores_the_nomination(tmp_path):
    # vip outranks the preemptor: it takes the GPUs that came free (upstream: nominated pods
    # of lower priority are not added when filtering it).
    rows = replay_rows(tmp_path, NODES, [
        job("low-a", 0, 5000, priority=1), job("low-b", 0, 110, priority=1),
        job("urgent", 100, 50, pods=2, priority=5), job("vip", 105, 1000, priority=9)], lowest_index(GANG_V137_PREEMPTING))
    vip_start = [(t, n) for t, e, w, _, n in _placement(rows) if w == "vip" and e == "started"]
    assert vip_start == [(110.0, "n2")]
