"""What Kueue counts of a workload's DRA claims against quota.

Kueue (`pkg/dra/claims.go` `GetResourceRequestsForResourceClaimTemplates`, `countDevicesPerClass`)
reads claims only with its `DynamicResourceAllocation` feature gate on (alpha, off by default);
then each ResourceClaimTemplate of a pod set adds, per request, `exactly.count` devices of its
DeviceClass as the logical resource `resources.deviceClassMappings` maps the class to. A
template Kueue cannot count makes the workload inadmissible: claim `constraints` or `config`,
`firstAvailable`, CEL selectors, admin access, allocation mode `All`, or a DeviceClass no
mapping names.
Named (shared) ResourceClaims are not counted.

The replay's quotas count `nvidia.com/gpu`: a class mapped to it adds its devices to the pod's
GPUs (`gpus_per_pod`, the containers' own count on a claim row); a class mapped to another
resource is counted by no quota of the replay (one warning says so). With the gate off a claim
row counts its `gpus_per_pod` only, as Kueue counts the containers' requests only.
"""

from __future__ import annotations

from dataclasses import replace

from scheduler.admission.objects import KueueConfiguration
from scheduler.dra.objects import ALL, ClaimSpec, DeviceRequest, DraInputs
from scheduler.model import Workload

GPU_RESOURCE = "nvidia.com/gpu"


def kueue_device_counts(workloads: list[Workload], inputs: DraInputs, config: KueueConfiguration
                        ) -> tuple[list[Workload], list[tuple[Workload, str]], tuple[str, ...]]:
    """(workloads with Kueue's GPU count per pod, (workload, Kueue's reason) of those Kueue
    cannot admit, warnings)."""
    if not config.dynamic_resource_allocation:
        return workloads, [], ()
    mapping = dict(config.device_class_mappings)
    counted: list[Workload] = []
    inadmissible: list[tuple[Workload, str]] = []
    elsewhere: set[str] = set()
    for workload in workloads:
        if not workload.claim_templates:
            counted.append(workload)
            continue
        devices, problem = 0, None
        for name in workload.claim_templates:
            problem = _uncountable_claim(name, inputs.templates[name])
            if problem is not None:
                break
            for request in inputs.templates[name].requests:
                problem = _uncountable(name, request, mapping)
                if problem is not None:
                    break
                alternative = request.alternatives[0]
                if mapping[alternative.device_class] == GPU_RESOURCE:
                    devices += alternative.count
                else:
                    elsewhere.add(mapping[alternative.device_class])
            if problem is not None:
                break
        if problem is not None:
            inadmissible.append((workload, problem))
        else:
            counted.append(replace(workload, gpus_per_pod=workload.gpus_per_pod + devices) if devices else workload)
    warnings = tuple(f"deviceClassMappings: {resource} is not a resource the replay's quotas count "
                     f"({GPU_RESOURCE}, cpu, memory): its devices are counted against no quota"
                     for resource in sorted(elsewhere))
    return counted, inadmissible, warnings


def _uncountable_claim(template: str, claim: ClaimSpec) -> str | None:
    """Kueue's reason it cannot count a template as a whole (`countDevicesPerClass`)."""
    if claim.constraints:
        return f"ResourceClaimTemplate {template}: device constraints (MatchAttribute) are not supported"
    if claim.has_config:
        return f"ResourceClaimTemplate {template}: device config is not supported"
    return None


def _uncountable(template: str, request: DeviceRequest, mapping: dict[str, str]) -> str | None:
    """Kueue's reason it cannot count one request of a template, in its words; None: it can."""
    prefix = f"ResourceClaimTemplate {template}:"
    if request.prioritized:
        return f"{prefix} FirstAvailable device selection is not supported"
    alternative = request.alternatives[0]
    if alternative.selectors:
        return f"{prefix} CEL selectors are not supported"
    if alternative.admin_access:
        return f"{prefix} AdminAccess is not supported"
    if alternative.allocation_mode == ALL:
        return f"{prefix} AllocationMode 'All' is not supported"
    if alternative.device_class not in mapping:
        return f"DeviceClass {alternative.device_class} is not mapped in DRA configuration for podset main"
    return None
