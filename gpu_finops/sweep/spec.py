"""The sweep TOML: what to replay, and under which scenarios (docs/sweeps.md has every key).

::

    [sweep]
    name = "tiny-policies"          # run ids are <name>-<scenario>; default: the file's stem
    charge_period = "1h"            # of the cost records (15m, 1h, 1d, ...)
    scenario_timeout_s = 21600      # a scenario's time limit (default 6 h; 0: none)

    [inputs]                        # one of: a preset, an `import` folder, or files
    preset = "tiny"                 # generated into OUT/inputs with `seed` (default 42)
    # imported = "cluster-import"   # trace.csv, cluster.csv, queues.yaml, prices.csv and the start of import.json
    # trace = "t.csv"  cluster = "c.csv"  queues = "q.yaml"  start = "2026-03-02T00:00:00Z"
    prices = "prices.csv"           # needed unless the preset or the import folder has one

    [grid]                          # every combination is a scenario
    profiles = ["gang-v1.37", "kube-default"]
    queues = ["inputs", "none"]     # the inputs' Kueue manifests, no admission layer, or a file
    scoring = ["LeastAllocated", "MostAllocated"]   # or [["GpuPacking", 2], ["LeastAllocated", 1]]
    preemption = ["profile", "none"]  # profile | none | priority | cheapest_loss | priority_search (not upstream)
    seeds = [42]
    never_preempt = [[], [1000]]    # trace overrides: priority classes with preemptionPolicy Never,
    disruption_mode = ["trace", {training = "all"}]  # and per workload kind disruption_mode,
    checkpoint_interval_s = ["trace", {training = 1800}]  # on_pod_loss, checkpoint_interval_s

    [[scenario]]                    # and/or an explicit list; each key as in [grid], one value
    name = "baseline"
    profile = "kube-default"
    queues = "none"

Paths are relative to the sweep file. Anything unknown or out of place is an `InputError`
naming the file and the key.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gpu_finops.sweep.task import DEFAULT_TIMEOUT_S
from gpu_finops.trace_policy import TracePolicy, kind_values, priorities
from scheduler.errors import InputError, checked_path_text
from scheduler.eventlog.text import parse_toml

PREEMPTION = ("profile", "none", "priority", "cheapest_loss", "priority_search")
TRACE_POLICY_AXES = ("never_preempt", "disruption_mode", "on_pod_loss", "checkpoint_interval_s")
GRID_KEYS = {"profiles": "profile", "queues": "queues", "scoring": "scoring", "preemption": "preemption",
             "seeds": "seed", "rightsize": "rightsize", **{axis: axis for axis in TRACE_POLICY_AXES}}
SCENARIO_KEYS = {"name", "profile", "queues", "scoring", "preemption", "seed", "trace", "cluster", "start",
                 "rightsize", *TRACE_POLICY_AXES}
INPUT_KEYS = {"preset", "seed", "imported", "trace", "cluster", "queues", "prices", "start", "format"}
SWEEP_KEYS = {"name", "charge_period", "workers", "baseline", "scenario_timeout_s"}
MAX_TIMEOUT_S = 30 * 86_400  # a month: past it, a limit is a mistake
DEFAULT_PROFILE = "gang-v1.37"
_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")
MAX_SCENARIOS = 10_000
"""The most scenarios one sweep file may hold: a grid of more is refused before anything is
written (each scenario writes a run folder and a state file)."""
MAX_NAME = 120
"""The longest scenario name: it names files (``runs/<s>/``, ``state/<s>.json``, ``logs/<s>.log``,
``.<s>.tmp-<pid>``), and a file name has at most 255 bytes."""

Scoring = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Inputs:
    """The inputs every scenario shares (a scenario may name its own trace or cluster)."""

    trace: Path | None = None
    cluster: Path | None = None
    queues: Path | None = None
    prices: Path | None = None
    start: str | None = None
    trace_format: str = "auto"
    preset: str | None = None  # generated into OUT/inputs when set
    preset_seed: int = 42
    imported: Path | None = None  # an `import` output folder


@dataclass(frozen=True)
class Scenario:
    """One replay of the sweep; ``queues`` is "inputs", "none" or a path (text)."""

    name: str
    profile: str = DEFAULT_PROFILE
    queues: str = "auto"  # read_sweep resolves it: the inputs' queues when they have some, else none
    scoring: Scoring | None = None  # None: the profile's own
    preemption: str = "profile"
    seed: int = 42
    trace: Path | None = None  # None: the sweep's inputs
    cluster: Path | None = None
    start: str | None = None
    # replay the trace with rightsized GPU requests for workloads below this efficiency
    # (gpu_finops.rightsizing); None: the requests as traced
    rightsize: float | None = None
    # Preemption policies as trace overrides (gpu_finops.trace_policy); empty: as traced
    never_preempt: tuple[int, ...] = ()
    disruption_mode: tuple[tuple[str, str], ...] = ()
    on_pod_loss: tuple[tuple[str, str], ...] = ()
    checkpoint_interval_s: tuple[tuple[str, float], ...] = ()

    @property
    def trace_policy(self) -> TracePolicy:
        return TracePolicy(self.never_preempt, self.disruption_mode, self.on_pod_loss, self.checkpoint_interval_s)

    def axes(self) -> dict[str, Any]:
        """The scenario's settings, as the comparison table and the database show them."""
        policy = self.trace_policy
        return {"profile": self.profile, "queues": self.queues, "scoring": scoring_label(self.scoring),
                "preemption": self.preemption, "seed": self.seed, "rightsize": self.rightsize,
                "trace_policy": None if policy.empty else policy.label()}


@dataclass(frozen=True)
class Sweep:
    source: Path
    name: str
    inputs: Inputs
    scenarios: tuple[Scenario, ...]
    charge_period_s: int = 3600
    workers: int | None = None
    baseline: str | None = None  # the scenario the others are ranked against ([sweep] baseline)
    scenario_timeout_s: float | None = DEFAULT_TIMEOUT_S  # a scenario's time limit; None: none

    def run_id(self, scenario: Scenario) -> str:
        return f"{self.name}-{scenario.name}"


@dataclass
class _Reader:
    path: Path

    def fail(self, key: str, message: str) -> InputError:
        return InputError(self.path, message, field=key)

    def table(self, document: dict[str, Any], key: str, allowed: set[str]) -> dict[str, Any]:
        value = document.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table")
        for name in value:
            if name not in allowed:
                raise self.fail(f"{key}.{name}", f"unknown key; known: {', '.join(sorted(allowed))}")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be non-empty text, got {value!r}")
        return value.strip()

    def path_of(self, value: Any, key: str, *, must_exist: bool = True) -> Path:
        path = (self.path.parent / checked_path_text(self.text(value, key), self.path, field=key)).resolve()
        if must_exist and not path.exists():
            raise self.fail(key, f"not found: {path}")
        return path

    def integer(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(key, f"must be a whole number, got {value!r}")
        return value


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file of the user's, or one line naming what is wrong with it (InputError)."""
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        return parse_toml(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(path, f"not valid TOML: {error}") from None


def read_sweep(path: Path) -> Sweep:
    """Read and check a sweep TOML; see the module docstring."""
    path = Path(path)
    document = read_toml(path)
    reader = _Reader(path)
    for key in document:
        if key not in ("sweep", "inputs", "grid", "scenario"):
            raise reader.fail(key, "unknown table; known: sweep, inputs, grid, scenario")
    settings = reader.table(document, "sweep", SWEEP_KEYS)
    name = _safe(reader.text(settings.get("name", path.stem), "sweep.name"))
    period = _period(reader, settings.get("charge_period", "1h"))
    workers = settings.get("workers")
    if workers is not None and reader.integer(workers, "sweep.workers") < 1:
        raise reader.fail("sweep.workers", f"must be >= 1, got {workers}")
    inputs = _inputs(reader, reader.table(document, "inputs", INPUT_KEYS))
    scenarios = _grid(reader, document.get("grid")) + _explicit(reader, document.get("scenario"))
    if len(scenarios) > MAX_SCENARIOS:
        raise reader.fail("scenario", f"{len(scenarios):,} scenarios: a sweep runs at most {MAX_SCENARIOS:,}; "
                          "split it into several sweep files")
    for scenario in scenarios:
        if len(scenario.name) > MAX_NAME:
            raise reader.fail("scenario.name", f"scenario name of {len(scenario.name)} characters "
                              f"({scenario.name[:24]}…): at most {MAX_NAME}, it names the scenario's files")
    if not scenarios:
        raise reader.fail("grid", "no scenario: give a [grid] or [[scenario]] tables")
    has_queues = inputs.queues is not None or inputs.preset is not None  # a preset writes queues.yaml
    seen: dict[str, int] = {}
    for number, scenario in enumerate(scenarios, start=1):
        if scenario.name in seen:
            raise reader.fail("scenario.name", f"scenario name {scenario.name!r} twice (scenarios {seen[scenario.name]} "
                              f"and {number}): name them")
        seen[scenario.name] = number
        if scenario.queues == "inputs" and not has_queues:
            raise reader.fail("queues", f"scenario {scenario.name}: queues = \"inputs\" but the inputs have no "
                              "queues file (use \"none\" or a path)")
    resolved = tuple(replace(s, queues="inputs" if has_queues else "none") if s.queues == "auto" else s
                     for s in scenarios)
    baseline = settings.get("baseline")
    if baseline is not None:
        baseline = reader.text(baseline, "sweep.baseline")
        if baseline not in seen:
            raise reader.fail("sweep.baseline", f"names no scenario: {baseline!r}; scenarios: "
                              f"{', '.join(sorted(seen))}")
    timeout = scenario_timeout(settings.get("scenario_timeout_s", DEFAULT_TIMEOUT_S),
                               lambda message: reader.fail("sweep.scenario_timeout_s", message))
    return Sweep(path.resolve(), name, inputs, resolved, period, workers, baseline, timeout)


def scenario_timeout(value: Any, fail: Any) -> float | None:
    """A scenario time limit in seconds (0: none), from the sweep file or the command line;
    ``fail(message)`` makes the error naming where it came from."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_TIMEOUT_S:
        raise fail(f"seconds from 0 (no limit) to {MAX_TIMEOUT_S:,}, got {value!r}")
    return float(value) or None


def _inputs(reader: _Reader, table: dict[str, Any]) -> Inputs:
    sources = [k for k in ("preset", "imported", "trace") if k in table]
    if len(sources) != 1:
        raise reader.fail("inputs", "give exactly one of preset, imported, or trace (with cluster)")
    prices = reader.path_of(table["prices"], "inputs.prices") if "prices" in table else None
    start = reader.text(table["start"], "inputs.start") if "start" in table else None
    trace_format = reader.text(table.get("format", "auto"), "inputs.format")
    if "preset" in table:
        preset = reader.text(table["preset"], "inputs.preset")
        if preset.endswith(".toml"):
            preset = str(reader.path_of(preset, "inputs.preset"))
        return Inputs(prices=prices, start=start, preset=preset,
                      preset_seed=reader.integer(table.get("seed", 42), "inputs.seed"))
    if "imported" in table:
        folder = reader.path_of(table["imported"], "inputs.imported")
        for name in ("trace.csv", "cluster.csv", "import.json"):
            if not (folder / name).is_file():
                raise reader.fail("inputs.imported", f"{folder} has no {name}: is it a `gpu-finops import` folder?")
        if prices is None and (folder / "prices.csv").is_file():
            prices = folder / "prices.csv"  # the import's starter book, or the user's edit of it
        if prices is None:
            raise reader.fail("inputs.prices", "an imported cluster needs a price book (prices = \"...\")")
        queues = folder / "queues.yaml" if (folder / "queues.yaml").is_file() else None
        return Inputs(folder / "trace.csv", folder / "cluster.csv", queues, prices, start, trace_format,
                      imported=folder)
    if "cluster" not in table:
        raise reader.fail("inputs.cluster", "a trace needs a cluster")
    if prices is None:
        raise reader.fail("inputs.prices", "give the price book (prices = \"...\")")
    queues = reader.path_of(table["queues"], "inputs.queues") if "queues" in table else None
    return Inputs(reader.path_of(table["trace"], "inputs.trace"), reader.path_of(table["cluster"], "inputs.cluster"),
                  queues, prices, start, trace_format)


def _grid(reader: _Reader, grid: Any) -> list[Scenario]:
    if grid is None:
        return []
    if not isinstance(grid, dict):
        raise reader.fail("grid", "must be a table")
    axes: dict[str, list[Any]] = {}
    for key, value in grid.items():
        if key not in GRID_KEYS:
            raise reader.fail(f"grid.{key}", f"unknown axis; known: {', '.join(GRID_KEYS)}")
        if not isinstance(value, list) or not value:
            raise reader.fail(f"grid.{key}", "must be a non-empty list")
        axes[GRID_KEYS[key]] = [_value(reader, GRID_KEYS[key], v, f"grid.{key}") for v in value]
    count = math.prod(len(values) for values in axes.values())
    if count > MAX_SCENARIOS:
        raise reader.fail("grid", f"{count:,} scenarios (the product of the axes' lengths): a sweep runs at most "
                          f"{MAX_SCENARIOS:,}; split it into several sweep files")
    varying = [axis for axis, values in axes.items() if len(values) > 1]
    scenarios = []
    for combination in itertools.product(*axes.values()):
        settings = dict(zip(axes, combination, strict=True))
        label = "_".join(_label(axis, settings[axis]) for axis in varying) or "base"
        scenarios.append(Scenario(name=label, **settings))
    return scenarios


def _explicit(reader: _Reader, tables: Any) -> list[Scenario]:
    if tables is None:
        return []
    if not isinstance(tables, list):
        raise reader.fail("scenario", "must be [[scenario]] tables")
    scenarios = []
    for number, table in enumerate(tables):
        where = f"scenario[{number}]"
        if not isinstance(table, dict):
            raise reader.fail(where, "must be a table")
        settings: dict[str, Any] = {}
        for key, value in table.items():
            if key not in SCENARIO_KEYS:
                raise reader.fail(f"{where}.{key}", f"unknown key; known: {', '.join(sorted(SCENARIO_KEYS))}")
            if key in ("trace", "cluster"):
                settings[key] = reader.path_of(value, f"{where}.{key}")
            elif key == "start":
                settings[key] = reader.text(value, f"{where}.start")
            elif key != "name":
                settings[key] = _value(reader, key, value, f"{where}.{key}")
        label = "_".join(_label(axis, v) for axis, v in settings.items() if axis not in ("trace", "cluster", "start"))
        name = _safe(reader.text(table["name"], f"{where}.name")) if "name" in table else (label or f"s{number}")
        scenarios.append(Scenario(name=name, **settings))
    return scenarios


def _value(reader: _Reader, axis: str, value: Any, key: str) -> Any:
    if axis == "profile":
        text = reader.text(value, key)
        return str(reader.path_of(text, key)) if text.endswith(".toml") else text
    if axis == "queues":
        text = reader.text(value, key)
        return text if text in ("inputs", "none") else str(reader.path_of(text, key))
    if axis == "scoring":
        return _scoring(reader, value, key)
    if axis == "preemption":
        text = reader.text(value, key)
        if text not in PREEMPTION:
            raise reader.fail(key, f"must be one of {', '.join(PREEMPTION)}, got {text!r}")
        return text
    if axis == "rightsize":
        if value == "none":
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise reader.fail(key, f"an efficiency threshold in (0, 1] (e.g. 0.5) or \"none\", got {value!r}")
        return float(value)
    if axis in TRACE_POLICY_AXES:
        if value == "trace":
            return ()
        fail = lambda message: reader.fail(key, message)  # noqa: E731
        return priorities(value, fail) if axis == "never_preempt" else kind_values(value, axis, fail)
    return reader.integer(value, key)


def _scoring(reader: _Reader, value: Any, key: str) -> Scoring:
    """"Plugin" (weight 1) or [["Plugin", weight], ...]."""
    if isinstance(value, str):
        return ((reader.text(value, key), 1.0),)
    if not isinstance(value, list) or not value:
        raise reader.fail(key, f"must be a plugin name or a list of [name, weight], got {value!r}")
    pairs = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str)
                or not isinstance(item[1], int | float) or isinstance(item[1], bool) or item[1] <= 0):
            raise reader.fail(key, f"each scoring entry is [\"Plugin\", weight > 0], got {item!r}")
        pairs.append((item[0], float(item[1])))
    return tuple(pairs)


def scoring_label(scoring: Scoring | None) -> str:
    if scoring is None:
        return "profile"
    if len(scoring) == 1 and scoring[0][1] == 1.0:
        return scoring[0][0]
    return "+".join(f"{name}{weight:g}" for name, weight in scoring)


def _label(axis: str, value: Any) -> str:
    if axis == "seed":
        return f"s{value}"
    if axis == "scoring":
        return _safe(scoring_label(value))
    if axis == "preemption":
        return {"none": "no-preemption", "profile": "profile-preemption"}.get(value, value)
    if axis == "queues" and value not in ("inputs", "none"):
        return _safe(Path(value).stem)
    if axis == "queues":
        return "kueue" if value == "inputs" else "no-kueue"
    if axis == "rightsize":
        return "as-requested" if value is None else f"rightsize-{value:g}"
    if axis in TRACE_POLICY_AXES:
        return _safe(TracePolicy(**{axis: value}).label()) if value else f"{axis.replace('_', '-')}-as-traced"
    return _safe(Path(value).stem if str(value).endswith(".toml") else str(value))


def _safe(text: str) -> str:
    safe = _SAFE.sub("-", text).strip("-.")
    return safe or "scenario"


def _period(reader: _Reader, text: Any) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    value = reader.text(text, "sweep.charge_period")
    try:
        seconds = int(value[:-1]) * units[value[-1]]
    except (ValueError, KeyError):
        raise reader.fail("sweep.charge_period", f"like 15m, 1h or 1d, got {value!r}") from None
    if seconds <= 0 or (86400 % seconds and seconds % 86400):
        raise reader.fail("sweep.charge_period", f"must divide a day or be whole days, got {value!r}")
    return seconds


def add_scenario_timeout(parser: argparse.ArgumentParser, default: str) -> None:
    """``--scenario-timeout`` of `sweep` and `advise quotas` (each replay's time limit)."""
    parser.add_argument("--scenario-timeout", type=float, metavar="SECONDS",
                        help=f"stop a replay running longer and record it as timed out; the others go on "
                        f"(default: {default} {DEFAULT_TIMEOUT_S:.0f}, six hours; 0: no limit)")


def scenario_timeout_of(args: argparse.Namespace) -> float | None | bool:
    """``--scenario-timeout`` as `run_sweep` takes it: False when not given (the sweep file's holds)."""
    if args.scenario_timeout is None:
        return False
    return scenario_timeout(args.scenario_timeout, lambda message: InputError("--scenario-timeout", message))
