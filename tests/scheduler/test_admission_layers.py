"""The admission layer's imports go one way: from the layer the replay drives (`kueue`) down
through the cycles' clock (`cycles`), the cycle (`admitter`), its nominations (`nominator`), the decisions, the queues and the quota tree to the Kueue
objects and their policies. A module may import only from layers below its own, lazy and
TYPE_CHECKING imports included; every module of `scheduler.admission` must sit in a layer."""

from __future__ import annotations

import grimp

PACKAGE = "scheduler.admission"
# Top to bottom; modules of one layer do not import each other unless listed in order here.
LAYERS: list[tuple[str, ...]] = [
    ("", "kueue", "tables"),  # "" is the package itself (its re-exports)
    ("cycles",),
    ("admitter", "placement_options"),
    ("cycle_memo",),
    ("nominator",),
    ("nomination_cache", "tas_preemption", "scan_progress"),
    ("fit_certificate",),
    ("flavor_assignment", "fair_sharing_order", "preemption.preemptor", "wait_for_pods_ready", "cycle_victims"),
    ("preemption.classical", "preemption.fair_sharing"),
    ("preemption.search", "preemption.bounds"),
    ("preemption.common", "flavor_screen"),
    ("queues", "holders", "fair_shares", "tas", "versions"),
    ("admission_fair_sharing",),
    ("workloads",),
    ("quota", "manifests", "port", "admits_nothing"),
    ("manifests.kinds", "manifests.configuration", "manifests.validation"),
    ("manifests.resource_groups",),
    ("manifests.fields",),
    ("manifests.quantities", "preemption"),  # `preemption` is the package (a docstring)
    ("objects",),
    ("policies",),
]


def _name(module: str) -> str:
    return f"{PACKAGE}.{module}" if module else PACKAGE


def test_every_admission_module_imports_only_from_the_layers_below_it():
    graph = grimp.build_graph("scheduler", exclude_type_checking_imports=False)
    level = {_name(module): index for index, layer in enumerate(LAYERS) for module in layer}
    modules = {m for m in graph.modules if m == PACKAGE or m.startswith(PACKAGE + ".")}
    assert modules == set(level), f"place these in LAYERS: {sorted(modules - set(level))}; gone: {sorted(set(level) - modules)}"
    upward = sorted(
        (module, imported)
        for module in modules
        for imported in graph.find_modules_directly_imported_by(module)
        if imported in level and level[imported] <= level[module] and imported != module
    )
    assert upward == [], "imports from the same or a higher layer"
