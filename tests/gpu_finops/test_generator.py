"""The generator: deterministic synthetic inputs whose shape matches the preset's promises."""

from __future__ import annotations

import csv
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpu_finops.generator import generate, preset_names
from scheduler.admission import read_queue_config
from scheduler.errors import InputError
from scheduler.trace import check_against_cluster, read_cluster, read_generic_trace

START = datetime(2026, 11, 2, tzinfo=UTC)
WEEK_S = 604800
FILES = ("trace.csv", "cluster.csv", "queues.yaml", "prices.csv")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    files = generate("demo", out, seed=42)
    trace = read_generic_trace(files.trace, START)
    cluster = read_cluster(files.cluster)
    return out, files, trace, cluster


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path):
    first, second, other = (generate("tiny", tmp_path / name, seed=seed) for name, seed in (("a", 7), ("b", 7), ("c", 8)))
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "trace.csv").read_bytes() != (tmp_path / "c" / "trace.csv").read_bytes()
    assert (first.workloads, first.pods, first.offered_load) == (second.workloads, second.pods, second.offered_load)
    assert other.nodes == first.nodes  # the cluster comes from the preset, not the seed


def test_the_bundled_demo_data_is_what_the_generator_writes(demo):
    out, _, _, _ = demo
    bundled = Path(__file__).resolve().parents[2] / "data" / "demo"
    for name in FILES:
        assert (out / name).read_bytes() == (bundled / name).read_bytes(), f"regenerate data/demo ({name})"


def test_demo_cluster_has_racks_models_and_pricing_categories(demo):
    _, files, _, cluster = demo
    assert len(cluster.nodes) >= 64 and {n.gpus for n in cluster.nodes} == {8}
    assert len(cluster.gpu_models) >= 3
    assert all(n.zone and n.rack for n in cluster.nodes)
    categories = Counter(n.pricing_category for n in cluster.nodes)
    assert categories["Standard"] > categories["Committed"] > 0 and categories["Dynamic"] > 0
    with files.prices.open(encoding="utf-8") as handle:
        assert {row["gpu_model"] for row in csv.DictReader(handle)} == set(cluster.gpu_models)


def test_demo_trace_is_a_week_of_mixed_work_at_high_load(demo):
    _, files, trace, cluster = demo
    workloads = trace.workloads
    assert not trace.rejected and 1500 <= len(workloads) <= 3000
    assert sum(w.pods for w in workloads) < 12000
    assert 0.8 <= files.offered_load <= 0.9
    assert max(w.submit_time_s for w in workloads) < WEEK_S and min(w.submit_time_s for w in workloads) < 86400
    assert len({w.tenant for w in workloads}) >= 4
    kinds = Counter(w.kind for w in workloads)
    assert set(kinds) == {"training", "fine-tune", "inference", "notebook"}

    gangs = [w for w in workloads if w.kind == "training" and w.pods > 1]
    assert {w.pods for w in gangs} >= {2, 32} and max(w.pods for w in gangs) <= 32
    assert all(w.gpus_per_pod == 8 for w in gangs)
    assert any(w.min_count < w.pods for w in gangs)
    assert all(1800 <= w.checkpoint_interval_s <= 3600 for w in workloads if w.kind == "training")
    assert {w.gpus_per_pod for w in workloads if w.kind == "notebook"} == {0.25, 0.5}
    assert all(w.pods == 1 and w.gpus_per_pod <= 8 for w in workloads if w.kind == "fine-tune")
    assert {w.priority for w in workloads if w.kind == "inference"} == {1000}
    assert {w.priority for w in workloads if w.kind == "training"} >= {500, 10}
    # diurnal: a weekday working hour sees more arrivals than a night hour
    by_hour = Counter(int(w.submit_time_s // 3600) % 24 for w in workloads if w.submit_time_s < 5 * 86400)
    assert by_hour[14] > 2 * by_hour[3]
    # heavy tail: the longest training runs far longer than the median one
    durations = sorted(w.duration_s for w in workloads if w.kind == "training")
    assert durations[-1] > 8 * durations[len(durations) // 2]
    # everything fits the cluster (nothing the checks would reject)
    assert check_against_cluster(workloads, cluster)[1] == []


def test_demo_gangs_fit_their_teams_quota_except_the_marked_unservable_ones(demo):
    # The most a team's ClusterQueue can ever hold of a GPU model: its nominal quota plus its
    # borrowing limit, and never more than every queue's quota of that flavor (Kueue's
    # potential available on an empty cluster). Only the `training-oversized` mix asks for more.
    import yaml

    _, files, trace, _ = demo
    documents = list(yaml.safe_load_all(files.queues.read_text(encoding="utf-8")))
    model_of = {d["metadata"]["name"]: d["spec"]["nodeLabels"]["nvidia.com/gpu.product"]
                for d in documents if d["kind"] == "ResourceFlavor"}
    most: dict[tuple[str, str], float] = {}
    flavor_total: Counter = Counter()
    for queue in (d for d in documents if d["kind"] == "ClusterQueue"):
        for flavor in queue["spec"]["resourceGroups"][0]["flavors"]:
            gpu = next(r for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")
            most[(queue["metadata"]["name"], model_of[flavor["name"]])] = gpu["nominalQuota"] + gpu["borrowingLimit"]
            flavor_total[model_of[flavor["name"]]] += gpu["nominalQuota"]
    oversized = []
    for w in trace.workloads:
        models = list(w.gpu_models) or list(flavor_total)
        ceiling = max(min(most[(f"team-{w.tenant}", m)], flavor_total[m]) for m in models)
        if w.pods * w.gpus_per_pod > ceiling:
            oversized.append(w.workload_id)
    assert oversized and all("-training-oversized-" in w for w in oversized)
    assert len(oversized) == sum(1 for w in trace.workloads if "-training-oversized-" in w.workload_id) <= 10


def test_demo_queues_route_every_trace_queue(demo):
    _, files, trace, _ = demo
    config = read_queue_config(files.queues)
    assert all(config.cluster_queue_for(w.queue) for w in trace.workloads)


def test_tiny_preset_is_small(tmp_path):
    files = generate("tiny", tmp_path, seed=42)
    assert files.nodes == 8 and files.gpus == 64
    assert 40 <= files.workloads <= 90
    trace = read_generic_trace(files.trace, START)
    assert max(w.submit_time_s for w in trace.workloads) < 86400


def test_unknown_preset_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such preset"):
        generate("enormous", tmp_path)


def test_benchmark_presets_are_the_large_one_scaled(tmp_path):
    # bench-10k: the large preset's pools at 1/20 and arrivals stopped at 10,000 pods.
    from gpu_finops.generator import load_preset

    large, _ = load_preset("large")
    small, _ = load_preset("bench-10k")
    assert small["mix"] == large["mix"] and small["teams"] == large["teams"]
    assert [p["count"] for p in small["pool"]] == [max(1, round(p["count"] * 0.05)) for p in large["pool"]]
    assert small["preset"]["horizon_s"] == large["preset"]["horizon_s"]
    files = generate("bench-10k", tmp_path / "out", seed=42)
    assert files.nodes == 102 and 10_000 <= files.pods < 10_000 + 32  # the last gang may overshoot
    big, _ = load_preset("bench-1m")
    assert sum(p["count"] for p in big["pool"]) >= 10_000
    assert sum(p["count"] * p["gpus"] for p in big["pool"]) >= 80_000


@pytest.mark.parametrize(("preset", "field"), [
    ('[preset]\nextends = "no-such"\n', "no-such"),
    ("[preset]\nextends = 3\n", "preset.extends"),
    ('[preset]\nextends = "large"\npool_scale = 0\n', "preset.pool_scale"),
    ('[preset]\nextends = "large"\npool_scale = "big"\n', "preset.pool_scale"),
])
def test_a_bad_preset_extension_names_the_field(tmp_path, preset, field):
    path = tmp_path / "mine.toml"
    path.write_text(preset, encoding="utf-8")
    with pytest.raises(InputError, match=field):
        generate(path, tmp_path / "out")



def test_the_demo_configuration_carries_the_presets_feature_gates(demo):
    """The demo preset turns on PrioritizePreemptorWorkloads (docs/fidelity.md): the
    manifests say so, and the replay reads it."""
    _, files, _, _ = demo
    config = read_queue_config(files.queues)
    assert config.configuration.prioritize_preemptor_workloads
    assert not [w for w in config.warnings if "feature gate" in w]


@pytest.mark.parametrize("gates", ["feature_gates = 3", 'feature_gates = { PartialAdmission = "no" }'])
def test_bad_feature_gates_in_a_preset_name_the_field(tmp_path, gates):
    path = tmp_path / "mine.toml"
    path.write_text(f'[preset]\nextends = "tiny"\n[queues]\n{gates}\n', encoding="utf-8")
    with pytest.raises(InputError, match="queues.feature_gates"):
        generate(path, tmp_path / "out")


def test_demo_utilisation_is_seeded_per_kind_and_moves_no_other_column(demo, tmp_path):
    """Notebooks low, training high, inference in between; its own random stream, so the
    trace without the column is what it was before the column existed."""
    _, files, trace, _ = demo
    by_kind: dict[str, list[float]] = {}
    for w in trace.workloads:
        assert w.gpu_utilization is not None and 0 <= w.gpu_utilization <= 1
        by_kind.setdefault(w.kind, []).append(w.gpu_utilization)
    mean = {kind: sum(values) / len(values) for kind, values in by_kind.items()}
    assert mean["notebook"] < 0.3 < mean["inference"] < 0.6 < mean["fine-tune"] < mean["training"]
    # the same preset without the knob: every other column byte for byte
    import tomllib

    from gpu_finops.generator import load_preset

    config, _ = load_preset("demo")
    text = (Path(__file__).resolve().parents[2] / "gpu_finops" / "presets" / "demo.toml").read_text()
    stripped = "\n".join(line for line in text.splitlines() if not line.startswith("gpu_utilization"))
    assert tomllib.loads(stripped)["mix"][0].get("gpu_utilization") is None and config["mix"][0]["gpu_utilization"]
    (tmp_path / "demo.toml").write_text(stripped)
    generate(tmp_path / "demo.toml", tmp_path / "plain", seed=42)
    with files.trace.open() as new, (tmp_path / "plain" / "trace.csv").open() as plain:
        new_rows, plain_rows = list(csv.reader(new)), list(csv.reader(plain))
    column = new_rows[0].index("gpu_utilization")
    assert [row[:column] + row[column + 1:] for row in new_rows] == [row[:column] + row[column + 1:] for row in plain_rows]
    assert {row[column] for row in plain_rows[1:]} == {""}  # no knob: unknown, never zero


def test_demo_labels_follow_the_team_from_their_own_stream_and_move_no_other_column(demo, tmp_path):
    """Each team's cost centre (llm and speech share one), a tenth of the workloads unlabelled;
    without the labels the trace is, column for column and byte for byte, what it was."""
    _, files, trace, _ = demo
    by_team: dict[str, Counter] = {}
    for w in trace.workloads:
        by_team.setdefault(w.tenant, Counter())[dict(w.labels).get("cost-center", "")] += 1
    assert {team: {v for v in values if v} for team, values in by_team.items()} == {
        "vision": {"cc-perception"}, "llm": {"cc-research"}, "speech": {"cc-research"}, "recsys": {"cc-ads"}}
    unlabelled = sum(values[""] for values in by_team.values()) / len(trace.workloads)
    assert 0.07 < unlabelled < 0.13
    text = (Path(__file__).resolve().parents[2] / "gpu_finops" / "presets" / "demo.toml").read_text()
    stripped = "\n".join(line for line in text.splitlines()
                         if not line.startswith(("labels =", "unlabelled_share")))
    (tmp_path / "demo.toml").write_text(stripped)
    generate(tmp_path / "demo.toml", tmp_path / "plain", seed=42)
    new_lines = files.trace.read_bytes().split(b"\n")
    plain_lines = (tmp_path / "plain" / "trace.csv").read_bytes().split(b"\n")
    assert len(new_lines) == len(plain_lines)
    for new, plain in zip(new_lines, plain_lines, strict=True):
        assert new == plain or new.startswith(plain[:-1])  # the same line, its last cell (labels) filled
    assert {row.rsplit(b",", 1)[-1] for row in plain_lines[1:] if row} == {b""}


def test_bad_team_labels_in_a_preset_name_the_team(tmp_path):
    text = (Path(__file__).resolve().parents[2] / "gpu_finops" / "presets" / "tiny.toml").read_text()
    bad = text.replace('[[teams]]\nname = ', '[[teams]]\nlabels = { "-cc" = "x" }\nname = ', 1)
    assert bad != text
    (tmp_path / "bad.toml").write_text(bad)
    with pytest.raises(InputError, match="teams.labels of .*Kubernetes label key"):
        generate(tmp_path / "bad.toml", tmp_path / "out")


@pytest.mark.parametrize("preset", preset_names())
def test_every_presets_manifests_read_back(tmp_path, preset):
    # bench-1m's cohort memory quota (4,423,680 GiB, a 10,260-node cluster) was refused by the
    # bound on hostile quantities: `make bench` stopped before replaying it.
    from gpu_finops.generator import generate_manifests

    cluster_path, queues_path = generate_manifests(preset, tmp_path)
    cluster = read_cluster(cluster_path)
    config = read_queue_config(queues_path)
    assert config.cluster_queues and config.flavors
    gpus = sum(node.gpus for node in cluster.nodes)
    for name, queue in config.cluster_queues.items():
        for group in queue.resource_groups:
            for flavor in group.flavors:
                for quota in flavor.resources:
                    assert quota.nominal_milli >= 0, (name, quota)
                    if quota.resource.endswith("gpu"):
                        assert quota.nominal_milli <= gpus * 1000, (name, quota)


def test_the_manifests_alone_are_the_bytes_generate_writes(tmp_path):
    from gpu_finops.generator import generate_manifests

    generate("tiny", tmp_path / "all", seed=7)
    generate_manifests("tiny", tmp_path / "manifests", seed=7)
    for name in ("cluster.csv", "queues.yaml"):
        assert (tmp_path / "all" / name).read_bytes() == (tmp_path / "manifests" / name).read_bytes()
