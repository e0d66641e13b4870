"""Synthetic inputs: a trace, a cluster, Kueue queues and a price book from a preset.

Contract of `generate(preset, out, seed)`:

- ``preset`` is the name of a bundled preset (``gpu_finops/presets/<name>.toml``: tiny, demo,
  large) or the path of a preset TOML file. The preset holds every knob (teams, GPU models
  and their illustrative prices, node pools, priority classes, workload mix, arrival
  pattern, target load); this module holds the procedure only.
- The output is a pure function of (preset, seed): one ``random.Random(seed)`` is passed
  down explicitly, nothing reads the wall clock, files are written with fixed formatting,
  so two runs with the same seed give byte-identical files. Utilisation (``gpu_utilization``)
  comes from a second stream seeded from the same seed, and pod labels (``labels``: a team's
  ``labels``, left out for a ``[preset] unlabelled_share`` of workloads) from a third, so adding
  or changing either moves no other column.
- ``out`` receives ``trace.csv`` (generic schema, ``submit_time`` in seconds from the run
  start), ``cluster.csv``, ``queues.yaml`` (Kueue v1beta2 manifests) and ``prices.csv``,
  each written to a temporary file and renamed into place.

Arrivals: each workload's hour of arrival is drawn from hour-of-week weights (t = 0 is a
Monday 00:00; working hours weigh most, weekends least), then uniformly within the hour.
Kinds, teams, sizes and GPU models are weighted choices from the preset; durations are
lognormal or Pareto, clipped. Workloads are drawn until the offered GPU-seconds inside the
horizon reach ``target_load`` x GPUs x horizon (or ``max_workloads``). A draw whose gang
could never fit on the allowed GPU models is narrowed to models where it fits, so the
generated trace has no LargerThanCluster rows.
"""

from __future__ import annotations

import math
import random
import reprlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gpu_finops.generator_dra import dra_objects, kueue_device_class_mappings
from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.text import parse_toml
from scheduler.eventlog.writes import write_files
from scheduler.model.cluster import Node
from scheduler.model.workload import MILLI
from scheduler.trace.cluster import expand_pools
from scheduler.trace.io import RowProblem, csv_text
from scheduler.trace.labels import labels_json, parse_labels

KUEUE_API = "kueue.x-k8s.io/v1beta2"
GPU_RESOURCE = "nvidia.com/gpu"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
CLUSTER_COLUMNS = ("node", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "block", "rack", "pricing_category")
PRICE_COLUMNS = ("gpu_model", "list_usd_per_gpu_hour", "contracted_usd_per_gpu_hour", "spot_usd_per_gpu_hour")
TRACE_COLUMNS = (  # the order of docs/contracts.md
    "workload_id", "submit_time", "duration_s", "pods", "min_count", "gpus_per_pod", "gpu_model",
    "cpu_milli_per_pod", "memory_mib_per_pod", "tenant", "queue", "priority",
    "checkpoint_interval_s", "topology_required", "topology_preferred", "parent_group", "kind",
    "gpu_utilization", "labels",
)
SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
DAYS_PER_WEEK = 7
WEEKDAYS = 5  # t = 0 is a Monday: days 0..4 of each week are weekdays


@dataclass(frozen=True, slots=True)
class GeneratedFiles:
    trace: Path
    cluster: Path
    queues: Path
    prices: Path
    workloads: int
    pods: int
    nodes: int
    gpus: int
    offered_load: float  # offered GPU-seconds inside the horizon / (GPUs x horizon)
    dra: Path | None = None  # dra.yaml, for a preset with a [dra] table (replay --dra)


@dataclass(frozen=True, slots=True)
class _Draw:
    """One generated workload before it gets its id (ids follow arrival order)."""

    submit_time_s: float
    team: str
    mix_name: str
    kind: str
    duration_s: int
    pods: int
    min_count: int
    gpus_per_pod: float
    gpu_model: str
    cpu_milli_per_pod: int
    memory_mib_per_pod: int
    priority: int
    checkpoint_interval_s: int | None
    topology_preferred: str | None
    gpu_utilization: float | None = None
    labels: str = ""  # the trace's canonical labels cell
    claim: str = ""  # a DRA ResourceClaimTemplate (the mix's `claim`)


def preset_names() -> list[str]:
    folder = resources.files("gpu_finops") / "presets"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def load_preset(preset: str | Path) -> tuple[dict[str, Any], Path]:
    """The preset's TOML as a dict, and where it came from (for error messages).

    A preset may start from another one: ``[preset] extends = "large"`` takes every table of
    that preset, then this file's ``[preset]`` keys over the base's and any other top-level
    table of this file in place of the base's. ``[preset] pool_scale = 5`` multiplies every
    pool's node, block and rack count (at least one of each): the benchmark presets are the
    large one at other sizes, with no second copy of its mix to keep in step.
    """
    config, source = _load_preset_file(preset)
    settings = config.get("preset", {})
    base = settings.get("extends") if isinstance(settings, Mapping) else None
    if base is not None:
        if not isinstance(base, str) or base == str(preset):
            raise InputError(source, f"must name another preset, got {reprlib.repr(base)}", field="preset.extends")
        parent, _ = _load_preset_file(base)
        if "extends" in parent.get("preset", {}):
            raise InputError(source, f"{base} extends another preset itself: one level only", field="preset.extends")
        merged = {**parent, **{k: v for k, v in config.items() if k != "preset"}}
        merged["preset"] = {**parent.get("preset", {}), **{k: v for k, v in settings.items() if k != "extends"}}
        config = merged
    scale = config.get("preset", {}).get("pool_scale")
    if scale is not None:
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not 0 < scale <= 1000:
            raise InputError(source, f"must be a number in (0, 1000], got {reprlib.repr(scale)}", field="preset.pool_scale")
        config["pool"] = [_scaled_pool(pool, float(scale)) for pool in config.get("pool", [])]
    return config, source


def _scaled_pool(pool: Any, scale: float) -> Any:
    if not isinstance(pool, Mapping):
        return pool  # expand_pools names the problem
    scaled = dict(pool)
    for key in ("count", "blocks", "racks"):
        if isinstance(pool.get(key), int) and not isinstance(pool.get(key), bool):
            scaled[key] = max(1, round(pool[key] * scale))
    return scaled


def _load_preset_file(preset: str | Path) -> tuple[dict[str, Any], Path]:
    if isinstance(preset, str) and "/" not in preset and not preset.endswith(".toml"):
        if preset not in preset_names():
            raise InputError(preset, f"no such preset; choose one of {', '.join(preset_names())} or give a .toml path")
        resource = resources.files("gpu_finops") / "presets" / f"{preset}.toml"
        return parse_toml(resource.read_text(encoding="utf-8")), Path(f"{preset}.toml")
    path = Path(preset)
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        return parse_toml(path.read_text(encoding="utf-8")), path
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}") from None


def generate_manifests(preset: str | Path, out: Path, seed: int = 42) -> tuple[Path, Path]:
    """Write only cluster.csv and queues.yaml (the same bytes `generate` writes; no workloads
    are drawn, so even bench-1m's take a second): the manifests a preset's cluster carries."""
    config, source = load_preset(preset)
    nodes = expand_pools(_require(config, "pool", source), source=source)
    out = Path(out)
    contents = {"cluster.csv": _cluster_csv(nodes), "queues.yaml": _queues_yaml(config, nodes, source, seed)}
    try:  # the same discipline as `generate`: never over a file of the user's
        write_files(out, contents, inputs=[source], what="--out")
    except NotOurs as refused:
        raise InputError(out, str(refused).removeprefix(f"{out}: ")) from None
    return out / "cluster.csv", out / "queues.yaml"


def generate(preset: str | Path, out: Path, seed: int = 42) -> GeneratedFiles:
    """Write trace.csv, cluster.csv, queues.yaml and prices.csv into ``out``."""
    config, source = load_preset(preset)
    rng = random.Random(seed)
    # its own stream: drawing utilisation must not shift any draw of the main one
    utilization_rng = random.Random(f"gpu-utilization:{seed}")
    labels_rng = random.Random(f"labels:{seed}")  # the same for the pod labels
    nodes = expand_pools(_require(config, "pool", source), source=source)
    settings = _require(config, "preset", source)
    horizon_s = float(_require(settings, "horizon_s", source, "preset."))
    draws, offered = _draw_workloads(config, nodes, horizon_s, rng, source, utilization_rng, labels_rng)
    out = Path(out)
    files = GeneratedFiles(
        trace=out / "trace.csv",
        cluster=out / "cluster.csv",
        queues=out / "queues.yaml",
        prices=out / "prices.csv",
        workloads=len(draws),
        pods=sum(d.pods for d in draws),
        nodes=len(nodes),
        gpus=sum(n.gpus for n in nodes),
        offered_load=offered,
        dra=out / "dra.yaml" if "dra" in config else None,
    )
    contents = {files.trace.name: _trace_csv(draws), files.cluster.name: _cluster_csv(nodes),
                files.queues.name: _queues_yaml(config, nodes, source, seed), files.prices.name: _prices_csv(config, source)}
    dra = dra_objects(config, nodes, source)
    if dra is not None:
        contents["dra.yaml"] = yaml.safe_dump_all(dra, sort_keys=False)
    try:  # never over a file of the user's (or the preset read), each file old or new
        write_files(out, contents, inputs=[source], what="--out")
    except NotOurs as refused:
        raise InputError(out, str(refused).removeprefix(f"{out}: ")) from None
    return files


# ------------------------------------------------------------------------------ drawing


def _draw_workloads(
    config: Mapping[str, Any],
    nodes: list[Node],
    horizon_s: float,
    rng: random.Random,
    source: Path,
    utilization_rng: random.Random | None = None,
    labels_rng: random.Random | None = None,
) -> tuple[list[_Draw], float]:
    settings = config["preset"]
    capacity = sum(n.gpus for n in nodes) * horizon_s
    budget = float(settings.get("target_load", 0.85)) * capacity
    max_workloads = int(settings.get("max_workloads", 1_000_000))
    max_pods = int(settings.get("max_pods", 100_000_000))
    teams = _require(config, "teams", source)
    team_names = [t["name"] for t in teams]
    team_weights = [float(t["weight"]) for t in teams]
    team_labels = {t["name"]: _team_labels(t, source) for t in teams}
    unlabelled = float(settings.get("unlabelled_share", 0.0))
    mixes = _require(config, "mix", source)
    mix_weights = [float(m["weight"]) for m in mixes]
    priorities = {p["name"]: int(p["value"]) for p in _require(config, "priority_classes", source)}
    hour_weights = _hour_weights(config.get("arrivals", {}), horizon_s)
    hours = range(len(hour_weights))
    fit_cache: dict[tuple[str, float], int] = {}

    draws: list[_Draw] = []
    offered = 0.0
    pods_drawn = 0
    while offered < budget and len(draws) < max_workloads and pods_drawn < max_pods:
        mix = rng.choices(mixes, weights=mix_weights)[0]
        team = rng.choices(team_names, weights=team_weights)[0]
        hour = rng.choices(hours, weights=hour_weights)[0]
        submit = round(min(horizon_s - 1.0, (hour + rng.random()) * SECONDS_PER_HOUR), 1)
        pods = int(_weighted(rng, mix["pods"]))
        gpus = float(_weighted(rng, mix["gpus_per_pod"]))
        min_count = pods
        if pods > 1 and rng.random() < float(mix.get("elastic_probability", 0.0)):
            fraction = rng.choice(mix["min_count_fraction"])
            min_count = max(1, min(pods - 1, math.ceil(pods * fraction)))
        model = _fitting_model(rng, mix["gpu_models"], nodes, min_count, gpus, fit_cache)
        if model is None:
            continue  # no allowed model can ever hold this gang: draw again
        duration = _duration(rng, mix["duration"])
        checkpoints = mix.get("checkpoint_interval_s")
        checkpoint = int(rng.choice(checkpoints)) if checkpoints else None
        preferred = None
        if mix.get("topology_preferred") and rng.random() < float(mix.get("topology_preferred_probability", 1.0)):
            preferred = mix["topology_preferred"]
        draws.append(
            _Draw(
                submit_time_s=submit,
                team=team,
                mix_name=mix["name"],
                kind=mix.get("kind", mix["name"]),
                duration_s=duration,
                pods=pods,
                min_count=min_count,
                gpus_per_pod=gpus,
                gpu_model=model,
                cpu_milli_per_pod=math.ceil(gpus * int(mix.get("cpu_milli_per_gpu", 0))),
                memory_mib_per_pod=math.ceil(gpus * int(mix.get("memory_mib_per_gpu", 0))),
                priority=priorities[mix["priority_class"]],
                checkpoint_interval_s=checkpoint,
                topology_preferred=preferred,
                gpu_utilization=_utilization(utilization_rng, mix.get("gpu_utilization"), source),
                labels=_labels(labels_rng, team_labels[team], unlabelled),
                claim=str(mix.get("claim", "")),
            )
        )
        pods_drawn += pods
        # Only the part inside the horizon loads this run's cluster.
        offered += pods * gpus * min(duration, horizon_s - submit)
    # Stable sort: equal submit times keep draw order, which is seed-determined.
    draws.sort(key=lambda d: d.submit_time_s)
    return draws, offered / capacity if capacity else 0.0


def _hour_weights(arrivals: Mapping[str, Any], horizon_s: float) -> list[float]:
    start, end = arrivals.get("work_hours", [0, HOURS_PER_DAY])
    work = float(arrivals.get("weekday_work_weight", 1.0))
    off = float(arrivals.get("weekday_off_weight", 1.0))
    weekend = float(arrivals.get("weekend_weight", 1.0))
    weights = []
    for hour in range(math.ceil(horizon_s / SECONDS_PER_HOUR)):
        day, hour_of_day = divmod(hour, HOURS_PER_DAY)
        if day % DAYS_PER_WEEK >= WEEKDAYS:
            weights.append(weekend)
        else:
            weights.append(work if start <= hour_of_day < end else off)
    return weights


def _weighted(rng: random.Random, pairs: Sequence[Sequence[Any]]) -> Any:
    """Pick from ``[[value, weight], ...]``."""
    return rng.choices([p[0] for p in pairs], weights=[float(p[1]) for p in pairs])[0]


def _fitting_model(
    rng: random.Random,
    options: Sequence[Sequence[Any]],
    nodes: list[Node],
    min_count: int,
    gpus: float,
    cache: dict[tuple[str, float], int],
) -> str | None:
    """Weighted choice among the model labels (``A|B``, "" = any) that can hold the gang."""
    fitting = []
    for label, weight in options:
        key = (label, gpus)
        if key not in cache:
            allowed = set(label.split("|")) if label else None
            milli = round(gpus * MILLI)
            per_gpu = MILLI // milli if milli < MILLI else 0
            cache[key] = sum(
                n.gpus * per_gpu if per_gpu else (n.gpus * MILLI) // milli
                for n in nodes
                if n.gpus and (allowed is None or n.gpu_model in allowed)
            )
        if cache[key] >= min_count:
            fitting.append((label, weight))
    return _weighted(rng, fitting) if fitting else None


def _utilization(rng: random.Random | None, spec: Mapping[str, Any] | None, source: Path) -> float | None:
    """The workload's mean GPU engine-active fraction, from a Beta(alpha, beta) law, to 0.001;
    None (unknown) for a mix without ``gpu_utilization``."""
    if rng is None or spec is None:
        return None
    try:
        alpha, beta = float(spec["alpha"]), float(spec["beta"])
    except (KeyError, TypeError, ValueError):
        raise InputError(source, "mix.gpu_utilization must be { alpha = A, beta = B } (a Beta law)") from None
    if not (alpha > 0 and beta > 0):
        raise InputError(source, f"mix.gpu_utilization: alpha and beta must be > 0, got {alpha}, {beta}")
    return round(rng.betavariate(alpha, beta), 3)


def _team_labels(team: Mapping[str, Any], source: Path) -> str:
    """A team's pod labels as the trace's cell ('' for none), checked as the trace reader would."""
    labels = team.get("labels", {})
    if not isinstance(labels, Mapping) or not all(isinstance(v, str) for v in labels.values()):
        raise InputError(source, f"teams.labels of {team.get('name')!r} must be a table of text values")
    cell = labels_json(dict(labels))
    try:
        parse_labels(cell)
    except RowProblem as problem:
        raise InputError(source, f"teams.labels of {team.get('name')!r}: {problem.reason}") from None
    return cell


def _labels(rng: random.Random | None, team_cell: str, unlabelled_share: float) -> str:
    """The team's labels, or none for ``unlabelled_share`` of its workloads (no stream, no draw
    when the team has none)."""
    if rng is None or not team_cell:
        return ""
    return "" if rng.random() < unlabelled_share else team_cell


def _duration(rng: random.Random, spec: Mapping[str, Any]) -> int:
    """Whole seconds from a lognormal (median_s, sigma) or Pareto (scale_s, alpha) law."""
    if spec["dist"] == "lognormal":
        value = rng.lognormvariate(math.log(float(spec["median_s"])), float(spec["sigma"]))
    elif spec["dist"] == "pareto":
        value = float(spec["scale_s"]) * rng.paretovariate(float(spec["alpha"]))
    else:
        raise ValueError(f"unknown duration law {spec['dist']!r}: use lognormal or pareto")
    return int(round(min(float(spec["max_s"]), max(float(spec["min_s"]), value))))


# ------------------------------------------------------------------------------ writing


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _trace_csv(draws: list[_Draw]) -> str:
    columns = TRACE_COLUMNS + (("resource_claim_templates",) if any(d.claim for d in draws) else ())
    rows = []
    for index, d in enumerate(draws):
        record = {
            "workload_id": f"{d.team}-{d.mix_name}-{index:05d}",
            "submit_time": f"{d.submit_time_s:.1f}",
            "duration_s": d.duration_s,
            "pods": d.pods,
            "min_count": d.min_count,
            "gpus_per_pod": _number(0 if d.claim else d.gpus_per_pod),  # a claim's pods: devices, no count
            "gpu_model": d.gpu_model,
            "cpu_milli_per_pod": d.cpu_milli_per_pod,
            "memory_mib_per_pod": d.memory_mib_per_pod,
            "tenant": d.team,
            "queue": d.team,
            "priority": d.priority,
            "checkpoint_interval_s": d.checkpoint_interval_s,
            "topology_preferred": d.topology_preferred,
            "kind": d.kind,
            "gpu_utilization": None if d.gpu_utilization is None else f"{d.gpu_utilization:.3f}",
            "labels": d.labels,
            "resource_claim_templates": d.claim,
        }
        rows.append([record.get(column) for column in columns])
    return csv_text(columns, rows)


def _cluster_csv(nodes: list[Node]) -> str:
    return csv_text(
        CLUSTER_COLUMNS,
        ([n.name, n.gpu_model, n.gpus, n.cpu_milli, n.memory_mib, n.zone, n.block, n.rack, n.pricing_category] for n in nodes),
    )


def _prices_csv(config: Mapping[str, Any], source: Path) -> str:
    models = _require(config, "models", source)
    return csv_text(PRICE_COLUMNS, ([m["name"], *(m[c] for c in PRICE_COLUMNS[1:])] for m in models))


def _apportion(total: int, weights: Sequence[float]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` into whole numbers that add up to it
    (largest remainder; ties go to the earlier entry)."""
    scale = sum(weights)
    exact = [total * w / scale for w in weights]
    shares = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


def _queues_yaml(config: Mapping[str, Any], nodes: list[Node], source: Path, seed: int) -> str:
    queues = config.get("queues", {})
    cohort = queues.get("cohort", "gpu-cluster")
    borrowing_fraction = float(queues.get("borrowing_fraction", 0.5))
    teams = config["teams"]
    weights = [float(t["weight"]) for t in teams]
    models = [m["name"] for m in config["models"]]
    per_model = {
        model: (
            sum(n.gpus for n in nodes if n.gpu_model == model),
            sum(n.cpu_milli for n in nodes if n.gpu_model == model),
            sum(n.memory_mib for n in nodes if n.gpu_model == model),
        )
        for model in models
    }
    # Each team's nominal quota of each flavor, in proportion to its weight, summing to the
    # flavor's capacity, so the cohort as a whole owns exactly the cluster.
    gpu_shares = {m: _apportion(per_model[m][0], weights) for m in models}
    # CPU in whole cores and memory in whole GiB, so the manifests read like hand-written ones.
    cpu_shares = {m: _apportion(per_model[m][1] // 1000, weights) for m in models}
    memory_shares = {m: _apportion(per_model[m][2] // 1024, weights) for m in models}

    documents: list[dict[str, Any]] = [_kueue_configuration(queues, source, dra="dra" in config)]
    for model in models:
        documents.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "ResourceFlavor",
                "metadata": {"name": model.lower()},
                "spec": {"nodeLabels": {GPU_PRODUCT_LABEL: model}},
            }
        )
    documents.append({"apiVersion": KUEUE_API, "kind": "Cohort", "metadata": {"name": cohort}, "spec": {}})
    for index, team in enumerate(teams):
        flavors = []
        for model in models:
            gpus_total, cpu_total, memory_total = per_model[model]
            borrow = round(borrowing_fraction * gpus_total)
            flavors.append(
                {
                    "name": model.lower(),
                    "resources": [
                        {"name": "cpu", "nominalQuota": cpu_shares[model][index], "borrowingLimit": round(borrowing_fraction * cpu_total / 1000)},
                        {"name": "memory", "nominalQuota": f"{memory_shares[model][index]}Gi", "borrowingLimit": f"{round(borrowing_fraction * memory_total / 1024)}Gi"},
                        {"name": GPU_RESOURCE, "nominalQuota": gpu_shares[model][index], "borrowingLimit": borrow},
                    ],
                }
            )
        documents.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "ClusterQueue",
                "metadata": {"name": f"team-{team['name']}"},
                "spec": {
                    "cohortName": cohort,
                    "namespaceSelector": {},
                    "queueingStrategy": queues.get("queueing_strategy", "BestEffortFIFO"),
                    "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                    "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU_RESOURCE], "flavors": flavors}],
                },
            }
        )
    for team in teams:
        documents.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "LocalQueue",
                "metadata": {"name": team["name"], "namespace": f"team-{team['name']}"},
                "spec": {"clusterQueue": f"team-{team['name']}"},
            }
        )
    for priority in config["priority_classes"]:
        documents.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": priority["name"]},
                "value": int(priority["value"]),
                "description": priority.get("description", ""),
            }
        )
    header = (
        f"# Kueue manifests generated by `gpu-finops generate --preset {source.stem} --seed {seed}`.\n"
        "# Kueue's Configuration (waitForPodsReady as current Kueue defaults it; the preset's\n"
        "# feature gates); one ClusterQueue per team, all in one cohort; a LocalQueue per team\n"
        "# namespace.\n"
    )
    body = "---\n".join(yaml.safe_dump(d, sort_keys=False, default_flow_style=False) for d in documents)
    return header + body


def _kueue_configuration(queues: Mapping[str, Any], source: Path, *, dra: bool = False) -> dict[str, Any]:
    """Kueue's own Configuration, spelled out: what current Kueue runs with when it is not
    configured (waitForPodsReady on, 30 min, no blocking; apis/config/v1beta2/defaults.go),
    unless the preset's [queues] sets `pods_ready_timeout`; with the preset's
    `feature_gates` (a table of gate name to true/false) as the Configuration's featureGates;
    with DRA inputs (`dra`), the device classes' `resources.deviceClassMappings`."""
    timeout = str(queues.get("pods_ready_timeout", "30m"))
    gates = queues.get("feature_gates", {})
    if not isinstance(gates, Mapping) or not all(isinstance(v, bool) for v in gates.values()):
        raise InputError(source, f"must map gate names to true or false, got {reprlib.repr(gates)}",
                         field="queues.feature_gates")
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        **({"featureGates": dict(gates)} if gates else {}),
        **({"resources": {"deviceClassMappings": kueue_device_class_mappings()}} if dra else {}),
        "waitForPodsReady": {
            "timeout": timeout,
            "recoveryTimeout": timeout,
            "blockAdmission": False,
            "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
        },
    }


def _require(mapping: Mapping[str, Any], key: str, source: Path, prefix: str = "") -> Any:
    if key not in mapping:
        raise InputError(source, "missing from the preset", field=prefix + key)
    return mapping[key]
