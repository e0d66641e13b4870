"""Drawn pod dumps (gangs of every kind, retries, missing and broken fields, pods that never
started, duplicates): every pod is accounted for exactly once, and what the importer writes is
a trace the replay accepts whole."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from cluster_dumps import A100, node, pod, t
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_finops.importers.kubectl import import_kubectl
from scheduler.commands import replay

GROUPINGS = ("none", "plugin", "kueue", "jobset", "indexed-job", "lws")


def _clock(seconds: int) -> str:
    return f"{8 + seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


@st.composite
def pods(draw) -> list[dict]:
    count = draw(st.integers(1, 14))
    drawn = []
    for number in range(count):
        grouping = draw(st.sampled_from(GROUPINGS))
        group = draw(st.sampled_from(["g0", "g1"]))
        index = draw(st.integers(0, 2))
        created = draw(st.integers(0, 3 * 3600))
        started = draw(st.one_of(st.none(), st.integers(created, created + 900)))
        finished = None if started is None else draw(st.one_of(st.none(), st.integers(started, started + 7200)))
        gpus = draw(st.sampled_from([None, 1, 2, 4, 8, "eight"]))
        labels, annotations, owner = {}, {}, None
        if grouping == "plugin":
            labels["scheduling.x-k8s.io/pod-group"] = group
        elif grouping == "kueue":
            labels.update({"kueue.x-k8s.io/pod-group-name": group, "kueue.x-k8s.io/pod-group-pod-index": str(index)})
            annotations["kueue.x-k8s.io/pod-group-total-count"] = str(draw(st.integers(1, 4)))
        elif grouping == "jobset":
            labels.update({"jobset.sigs.k8s.io/jobset-name": group, "batch.kubernetes.io/job-completion-index":
                           str(index), "jobset.sigs.k8s.io/replicatedjob-name": "w"})
        elif grouping == "indexed-job":
            annotations["batch.kubernetes.io/job-completion-index"] = str(index)
            owner = ("Job", group, "batch/v1")
        elif grouping == "lws":
            labels.update({"leaderworkerset.sigs.k8s.io/name": group, "leaderworkerset.sigs.k8s.io/group-index": "0",
                           "leaderworkerset.sigs.k8s.io/worker-index": str(index)})
        drawn.append(pod(
            f"p{number}", draw(st.sampled_from(["ns-a", "ns-b"])), created=_clock(created), gpus=gpus,
            started=None if started is None else _clock(started),
            finished=None if finished is None else _clock(finished),
            phase=draw(st.sampled_from(["Succeeded", "Failed"])) if finished is not None else None,
            node="a100-0" if started is not None else None, labels=labels, annotations=annotations, owner=owner,
            restarts=draw(st.integers(0, 3)),
            status=None if started is not None else draw(st.sampled_from([{}, {"phase": "Pending"}])),
        ))
    if draw(st.booleans()):  # the same pod again, as a later dump would hold it
        drawn.append(json.loads(json.dumps(drawn[0])))
    return drawn


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@settings(max_examples=25, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=pods())
def test_every_pod_is_accounted_for_and_the_trace_replays_whole(tmp_path, drawn):
    dumps = tmp_path / "dumps"
    dumps.mkdir(exist_ok=True)
    (dumps / "pods.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": drawn}))
    (dumps / "nodes.json").write_text(json.dumps({"kind": "List", "items": [node("a100-0", A100, 8),
                                                                             node("a100-1", A100, 8)]}))
    out = tmp_path / "out"
    result = import_kubectl([dumps / "pods.json"], [dumps / "nodes.json"], out)
    pods_csv = _rows(out / "pods.csv")
    assert len(pods_csv) == len(drawn) == result.input_pods  # each input pod, once
    assert Counter((p["source"], p["row"]) for p in pods_csv).most_common(1)[0][1] == 1
    rejected = {(r["source"], r["row"]) for r in _rows(out / "rejected.csv")}
    trace = {r["workload_id"]: r for r in _rows(out / "trace.csv")}
    members: dict[str, set[str]] = {}
    for row in pods_csv:
        assert row["role"] in ("workload", "member", "rejected"), row
        if row["role"] == "rejected":
            assert (row["source"], row["row"]) in rejected
        else:
            members.setdefault(row["workload_id"], set()).add(row["member"])
    assert set(members) == set(trace)  # no workload without a pod, no pod without its workload
    assert all(int(trace[w]["pods"]) == len(m) for w, m in members.items())
    assert all(1 <= int(r["min_count"]) <= int(r["pods"]) and float(r["duration_s"]) >= 1 for r in trace.values())
    if trace:
        start = json.loads((out / "import.json").read_text())["start"]
        replayed = replay(out / "trace.csv", out / "cluster.csv", tmp_path / "run", start=start, run_id="drawn")
        assert replayed.workloads + replayed.rejected_rows == len(trace)
        # nothing refused for its form: only a gang bigger than the two drawn nodes may be
        refused = _rows(tmp_path / "run" / "rejected.csv") if replayed.rejected_rows else []
        assert all(r["reason"].startswith("LargerThanCluster") for r in refused), refused


def test_clock_helper_matches_the_fixture_times():
    assert t(_clock(3723)) == "2026-03-02T09:02:03Z"
