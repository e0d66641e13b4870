"""A scenario's scheduling profile: the one it names, or that profile with its scoring plugins
or its preemption changed, written as a profile TOML of its own (the replay reads it like any
user profile and refuses an unknown plugin with the file and key)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import tomli_w

from gpu_finops.sweep.spec import Scenario, scoring_label
from scheduler.errors import InputError
from scheduler.eventlog.text import parse_toml

WORKLOAD_PREEMPTION = "WorkloadPreemption"
PRIORITY_LEVEL_SEARCH = "PriorityLevelSearchPreemption"  # KEP-5710's dropped proposal, not upstream
VICTIM_ORDERS = ("priority", "cheapest_loss")


def base_profile(name_or_path: str) -> tuple[str, dict[str, Any]]:
    """(text, parsed) of a shipped profile by name or a profile TOML by path."""
    if name_or_path.endswith(".toml"):
        path = Path(name_or_path)
        text, label = path.read_text(encoding="utf-8"), path.name
    else:
        resource = resources.files("scheduler") / "profiles" / f"{name_or_path}.toml"
        if not resource.is_file():
            known = sorted(p.name.removesuffix(".toml") for p in (resources.files("scheduler") / "profiles").iterdir()
                           if p.name.endswith(".toml"))
            raise InputError("profile", f"unknown profile {name_or_path!r}; shipped: {', '.join(known)}")
        text, label = resource.read_text(encoding="utf-8"), f"{name_or_path}.toml"
    try:
        return text, parse_toml(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(label, f"not valid TOML: {error}") from None


def scenario_profile(scenario: Scenario, folder: Path) -> str:
    """The ``--profile`` value of a scenario: its profile as named, or a derived TOML in
    ``folder`` when the scenario changes scoring or preemption."""
    if scenario.scoring is None and scenario.preemption == "profile":
        return scenario.profile
    text, profile = base_profile(scenario.profile)
    del text
    points = dict(profile.get("extension_points", {}))
    base = str(profile.get("name", Path(scenario.profile).stem))
    changes = []
    if scenario.scoring is not None:
        points["score"] = [[name, weight] for name, weight in scenario.scoring]
        changes.append(scoring_label(scenario.scoring))
    if scenario.preemption == "none":
        points["post_filter"] = []
        changes.append("no-preemption")
    elif scenario.preemption in (*VICTIM_ORDERS, "priority_search"):
        post_filter = points.get("post_filter", [])
        post_filter = [post_filter] if isinstance(post_filter, str) else list(post_filter)
        if WORKLOAD_PREEMPTION not in post_filter:
            raise InputError("preemption", f"scenario {scenario.name}: preemption = {scenario.preemption!r} changes "
                             f"{WORKLOAD_PREEMPTION}, which profile {base} does not use "
                             "(use gang-v1.37, or profile / none)")
    if scenario.preemption == "priority_search":
        points["post_filter"] = [PRIORITY_LEVEL_SEARCH if name == WORKLOAD_PREEMPTION else name
                                 for name in post_filter]
        arguments = {k: dict(v) for k, v in profile.get("plugin_args", {}).items()}
        if WORKLOAD_PREEMPTION in arguments:  # its victim order, for the same victims' reprieves
            arguments[PRIORITY_LEVEL_SEARCH] = arguments.pop(WORKLOAD_PREEMPTION)
            profile["plugin_args"] = arguments
        changes.append("priority-search-not-upstream")
    elif scenario.preemption in VICTIM_ORDERS:
        arguments = {k: dict(v) for k, v in profile.get("plugin_args", {}).items()}
        arguments.setdefault(WORKLOAD_PREEMPTION, {})["victim_order"] = scenario.preemption
        profile["plugin_args"] = arguments
        changes.append(f"victims-{scenario.preemption}")
    profile["extension_points"] = points
    profile["name"] = "+".join([base, *changes])
    profile["description"] = (str(profile.get("description", "")) +
                              f" [sweep scenario {scenario.name}: {', '.join(changes)}]").strip()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario.name}.toml"
    text = tomli_w.dumps(profile)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:  # unchanged: same file, same hash
        path.write_text(text, encoding="utf-8")
    return str(path)
