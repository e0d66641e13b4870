"""Which nodes a pod's attempt looks at, and in which order (kube-scheduler v1.35+).

Upstream: kubernetes `pkg/scheduler/schedule_one.go` (`algorithm.go` on master):
- `findNodesThatFitPod` → `evaluateNominatedNode`: a pod whose preemption nominated a node
  tries that node first; when it passes the filters it is chosen without a scan (and
  `nextStartNodeIndex` does not move).
- `findNodesThatPassFilters` + `numFeasibleNodesToFind`: nodes are filtered from
  `nextStartNodeIndex` until numFeasibleNodesToFind pass (adaptive percentageOfNodesToScore:
  50 − nodes/125 %, at least 5 % and 100 nodes); the index then moves on by the nodes
  processed (feasible + failed), so the next pod starts where this one stopped.
"""

from __future__ import annotations

from tests.scheduler.scenario import GANG_V137_PREEMPTING, job, node, replay_rows, story


def test_a_preemptor_binds_to_its_nominated_node_not_to_the_node_a_scan_prefers(tmp_path):
    """kube-default (pod by pod). 'early' holds n1 until t=40, 'late' holds n2 (started
    later, so pickOneNodeForPreemption takes it: latest start). 'urgent' preempts late on n2
    at t=10 (nominated n2; late terminates for 30 s). At t=40 late has terminated and early has finished:
    both nodes are empty and a scan's heap would give n1, but the nominated n2 passes its
    filters and is taken without a scan."""
    nodes = [node("n1"), node("n2")]
    workloads = [job("early", 0, 40, priority=1), job("late", 5, 9000, priority=1),
                 job("urgent", 10, 100, priority=100)]
    rows = replay_rows(tmp_path, nodes, workloads, "kube-default")
    assert story(rows, events=("started", "preempted", "finished")) == [
        (0.0, "started", "early", 0, "n1"),
        (5.0, "started", "late", 0, "n2"),
        (40.0, "finished", "early", 0, "n1"),
        (40.0, "preempted", "late", 0, "n2"),  # terminated after its 30 s grace period
        (40.0, "started", "urgent", 0, "n2"),
        (41.0, "started", "late", 0, "n1"),  # requeued, after its 1 s backoff
        (140.0, "finished", "urgent", 0, "n2"),
        (9041.0, "finished", "late", 0, "n1"),
    ]


def test_the_partial_search_starts_where_the_last_one_stopped(tmp_path):
    """120 empty nodes: numFeasibleNodesToFind is 100 (50 % of 120 is 60, at least 100).
    Pod 1 scans n000…n099 (n100 would be the 101st feasible node and cancels the search):
    all tie, the heap's root is the first, n000; the start moves to 100. Pod 2 scans n100…n119
    then n000…n079: n000 now scores lower, the root is n100; the start moves to 80. Pod 3
    scans n080…n119, n000…n059: n080."""
    nodes = [node(f"n{i:03d}") for i in range(120)]
    workloads = [job(f"p{i}", float(i), 9000, gpus=1) for i in (1, 2, 3)]
    rows = replay_rows(tmp_path, nodes, workloads, "gang-v1.37")
    assert story(rows, events=("started",)) == [
        (1.0, "started", "p1", 0, "n000"),
        (2.0, "started", "p2", 0, "n100"),
        (3.0, "started", "p3", 0, "n080"),
    ]


def test_percentage_100_scores_every_node_from_a_start_that_never_moves(tmp_path):
    """percentage_of_nodes_to_score = 100: every node is filtered and scored, the start
    moves by all of them (back to where it was). p1 takes n000 (all tie: the root is the
    first); p2 n001 (n000 scores lower and sinks below its tied children). For p3 n000 and
    n001 score lower: heap.Init sifts n003 (index 3) up above n001 (index 1), and on the tie
    at the root its left child n003 beats the right, n002: p3 takes n003, not n002."""
    profile = (
        'name = "all-nodes"\nunit = "pod_group"\n[extension_points]\npost_filter = ["WorkloadPreemption"]\n'
        "[behaviour]\npercentage_of_nodes_to_score = 100\n"
    )
    nodes = [node(f"n{i:03d}") for i in range(120)]
    workloads = [job(f"p{i}", float(i), 9000, gpus=1) for i in (1, 2, 3)]
    rows = replay_rows(tmp_path, nodes, workloads, profile)
    assert [s[4] for s in story(rows, events=("started",))] == ["n000", "n001", "n003"]


def test_a_verified_replay_on_a_cluster_where_the_start_rotates_writes_the_same_log(tmp_path):
    """110 nodes (100 feasible found per search, so the start moves), three priority
    levels: workload-aware preemption plans the preemptor with the partial search, and its
    `--verify` twins (victims planned by removal, one by one) start where the checked
    computation started and put the start back, so checking changes nothing."""
    from scheduler.commands import replay
    from scheduler.verify import Verifier
    from tests.scheduler.scenario import replay_rows

    nodes = [node(f"n{i:03d}") for i in range(110)]
    workloads = [job(f"w{i:03d}", i * 30.0, 20_000 + (i * 97) % 3000, pods=(4, 8, 2)[i % 3], gpus=(8, 4, 2, 1)[i % 4],
                     priority=(0, 100, 1000)[(i // 7) % 3]) for i in range(70)]
    (tmp_path / "plain").mkdir()
    replay_rows(tmp_path / "plain", nodes, workloads, GANG_V137_PREEMPTING)
    verifier = Verifier()
    plain = tmp_path / "plain"
    profile = tmp_path / "profile.toml"
    profile.write_text(GANG_V137_PREEMPTING)
    replay(plain / "trace.csv", plain / "cluster.csv", tmp_path / "verified", profile=str(profile), seed=1,
           verifier=verifier)
    assert verifier.checks["victims planned on the view without lower priorities"] > 0, verifier.summary()
    assert (tmp_path / "verified" / "events.parquet").read_bytes() == (plain / "run" / "events.parquet").read_bytes()


def test_a_preempting_pod_groups_pod_binds_to_the_node_of_its_proposed_assignment(tmp_path):
    """gang-v1.37 (pod groups, workload-aware preemption). 'hi' (priority 1000) holds n1 until
    t=40; 'a' and 'b' (priority 1) hold n2 and n3. 'urgent' (priority 100) is planned at t=10
    on the cluster without lower priorities: n1 busy, n2 and n3 empty, the heap's root n2;
    'a' is the victim and urgent's pod is nominated to n2. At t=40 hi has finished and a has
    terminated: a scan's heap would give n1, but the pod's nominated n2 passes the filters."""
    nodes = [node("n1"), node("n2"), node("n3")]
    workloads = [job("hi", 0, 40, priority=1000), job("a", 1, 9000, priority=1), job("b", 2, 9000, priority=1),
                 job("urgent", 10, 100, priority=100)]
    rows = replay_rows(tmp_path, nodes, workloads, GANG_V137_PREEMPTING)
    placed = story(rows, events=("started", "preempted"))
    assert (40.0, "preempted", "a", 0, "n2") in placed, placed
    assert [s for s in placed if s[2] == "urgent"] == [(40.0, "started", "urgent", 0, "n2")]
