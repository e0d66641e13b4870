"""``spec.resourceGroups`` of a ClusterQueue or Cohort: flavors and their quotas, validated
the way Kueue's webhook does where a replay would otherwise go wrong silently.

- a resource is covered by one resource group only, a flavor sits in one group only;
- every flavor of a group lists every covered resource, once, each with a nominalQuota;
- borrowingLimit / lendingLimit only inside a cohort (a Cohort: only with a parent);
- lendingLimit <= nominalQuota.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.admission.manifests.fields import FieldReader
from scheduler.admission.objects import FlavorQuotas, ResourceGroup, ResourceQuota

_RESOURCE_FIELDS = {"name", "nominalQuota", "borrowingLimit", "lendingLimit"}


def read_resource_groups(reader: FieldReader, spec: Mapping, owner: str, allow_limits: bool) -> tuple[ResourceGroup, ...]:
    groups = []
    covered_anywhere: dict[str, int] = {}
    flavor_group: dict[str, int] = {}
    for g, group in enumerate(reader.sequence(spec.get("resourceGroups"), "spec.resourceGroups")):
        path = f"spec.resourceGroups[{g}]"
        group = reader.mapping(group, path, optional=False)
        reader.unknown_fields(group, {"coveredResources", "flavors"}, path + ".")
        covered = tuple(
            reader.name(r, f"{path}.coveredResources[{i}]")
            for i, r in enumerate(reader.sequence(group.get("coveredResources"), path + ".coveredResources"))
        )
        if not covered:
            raise reader.error(path + ".coveredResources", "must list at least one resource")
        for covered_resource in covered:
            if covered_resource in covered_anywhere:
                raise reader.error(path + ".coveredResources",
                                   f"{covered_resource!r} is already covered by resourceGroups[{covered_anywhere[covered_resource]}]")
            covered_anywhere[covered_resource] = g
        flavors = []
        for f, flavor in enumerate(reader.sequence(group.get("flavors"), path + ".flavors")):
            fpath = f"{path}.flavors[{f}]"
            flavor = reader.mapping(flavor, fpath, optional=False)
            reader.unknown_fields(flavor, {"name", "resources"}, fpath + ".")
            flavor_name = reader.name(flavor.get("name"), fpath + ".name")
            if flavor_name in flavor_group:
                raise reader.error(fpath + ".name", f"flavor {flavor_name!r} is already in resourceGroups[{flavor_group[flavor_name]}]; "
                                   "a flavor belongs to one resource group")
            flavor_group[flavor_name] = g
            quotas = [
                _resource_quota(reader, item, f"{fpath}.resources[{r}]", covered, owner, allow_limits)
                for r, item in enumerate(reader.sequence(flavor.get("resources"), fpath + ".resources"))
            ]
            listed = [q.resource for q in quotas]
            missing = [r for r in covered if r not in listed]
            if missing or len(set(listed)) != len(listed):
                raise reader.error(fpath + ".resources", f"must list each covered resource once ({', '.join(covered)}); "
                                   f"missing or repeated: {', '.join(missing) or 'repeated'}")
            flavors.append(FlavorQuotas(flavor_name, tuple(quotas)))
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups)


def _resource_quota(reader: FieldReader, item: object, rpath: str, covered: tuple[str, ...], owner: str,
                    allow_limits: bool) -> ResourceQuota:
    resource = reader.mapping(item, rpath, optional=False)
    reader.unknown_fields(resource, _RESOURCE_FIELDS, rpath + ".")
    resource_name = reader.name(resource.get("name"), rpath + ".name")
    if resource_name not in covered:
        raise reader.error(rpath + ".name", f"{resource_name!r} is not in coveredResources ({', '.join(covered)})")
    if "nominalQuota" not in resource:
        raise reader.error(rpath + ".nominalQuota", "missing: every resource needs a nominalQuota")
    limits = {}
    for key in ("borrowingLimit", "lendingLimit"):
        if resource.get(key) is not None:
            if not allow_limits:
                raise reader.error(f"{rpath}.{key}", f"only allowed when {owner} is in a cohort (has a parent)")
            limits[key] = reader.quantity(resource[key], f"{rpath}.{key}")
    nominal = reader.quantity(resource["nominalQuota"], rpath + ".nominalQuota")
    if limits.get("lendingLimit") is not None and limits["lendingLimit"] > nominal:
        raise reader.error(rpath + ".lendingLimit", f"must be less than or equal to nominalQuota ({resource['nominalQuota']}), "
                           f"got {resource['lendingLimit']!r}")
    return ResourceQuota(resource_name, nominal, limits.get("borrowingLimit"), limits.get("lendingLimit"))
