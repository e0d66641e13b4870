"""What Kueue counts of a workload's DRA claims against quota, as Kueue master decides it.

The gate is `KueueDRAIntegration` (beta, on by default; `pkg/features/kube_features.go`). With it
off, `KueueDRARejectWorkloadsWhenDRADisabled` (beta, on by default) makes a workload with claims
inadmissible (`workload_controller.go` Reconcile); with both off, claims count nothing. With it on
(`workload_controller.go` `handleDRA`; `pkg/dra/claims.go`):

- a pod naming a ResourceClaim (shared) makes the workload inadmissible (`HasResourceClaim`);
- each ResourceClaimTemplate adds, per request in order (`countDevicesPerClass`), `exactly.count`
  devices of its DeviceClass; `firstAvailable` and allocation mode `All` are refused, an
  `adminAccess` request counts nothing (whatever its mode); claim `constraints` and `config`
  are accepted;
- a request with CEL selectors is checked against every device of the cluster's
  ResourceSlices (`validateCELSelectorsAgainstDevices`): its class's and its own selectors
  must match at least `count` devices, each device counted for one request of the template;
- every counted class must be mapped by `resources.deviceClassMappings`
  (`GetResourceRequestsForResourceClaimTemplates`), as the logical resource it names.

A refusal's message is the field error's detail, in Kueue's words. The replay's quotas count
`nvidia.com/gpu`: a class mapped to it adds its devices to the pod's GPUs (`gpus_per_pod`, the
containers' own count on a claim row); a class mapped to another resource is counted by no quota
of the replay (one warning says so).
"""

from __future__ import annotations

from scheduler.admission.objects import KueueConfiguration
from scheduler.dra.allocator import Matcher
from scheduler.dra.objects import ALL, ClaimSpec, Device, DraInputs, SelectorError
from scheduler.model import Workload

GPU_RESOURCE = "nvidia.com/gpu"
POD_SET = "main"  # the replay's one pod set per workload
DRA_DISABLED = "Workload uses DRA resources but the KueueDRAIntegration feature gate is not enabled"
NAMED_CLAIM = "KueueDRAIntegration feature does not support use of resource claims"


def kueue_device_counts(workloads: list[Workload], inputs: DraInputs, config: KueueConfiguration,
                        matcher: Matcher) -> tuple[list[Workload], list[tuple[Workload, str, str]], tuple[str, ...]]:
    """(workloads with Kueue's GPU count per pod, (workload, trace field, Kueue's reason) of
    those Kueue cannot admit, warnings)."""
    if not config.dra_integration:
        if not config.reject_dra_when_disabled:
            return workloads, [], ()
        return ([w for w in workloads if not w.claims_devices],
                [(w, _trace_field(w), DRA_DISABLED) for w in workloads if w.claims_devices], ())
    counter = _Counter(inputs, dict(config.device_class_mappings), matcher)
    counted: list[Workload] = []
    inadmissible: list[tuple[Workload, str, str]] = []
    for workload in workloads:
        if workload.shared_claim is not None:
            inadmissible.append((workload, _trace_field(workload), NAMED_CLAIM))
            continue
        devices, problem = 0, None
        for name in workload.claim_templates:
            gpus, problem = counter.gpus(name, inputs.templates[name])
            if problem is not None:
                break
            devices += gpus
        if problem is not None:
            inadmissible.append((workload, "resource_claim_templates", problem))
        else:
            counted.append(workload.replaced(gpus_per_pod=workload.gpus_per_pod + devices) if devices else workload)
    warnings = tuple(f"deviceClassMappings: {resource} is not a resource the replay's quotas count "
                     f"({GPU_RESOURCE}, cpu, memory): its devices are counted against no quota"
                     for resource in sorted(counter.elsewhere))
    return counted, inadmissible, warnings


def _trace_field(workload: Workload) -> str:
    """The trace column a refusal of the workload's claims names: its named claim, if any."""
    return "resource_claim" if workload.shared_claim is not None else "resource_claim_templates"


class _Counter:
    """Kueue's count of one template's devices, and its refusals."""

    def __init__(self, inputs: DraInputs, mapping: dict[str, str], matcher: Matcher) -> None:
        self.inputs = inputs
        self.mapping = mapping
        self.matcher = matcher
        self.elsewhere: set[str] = set()
        self._cluster_devices: list[Device] | None = None

    def gpus(self, template: str, claim: ClaimSpec) -> tuple[int, str | None]:
        """(devices the template adds to the pod's GPUs, None) or (0, Kueue's reason)."""
        per_class, problem = self._devices_per_class(claim)
        if problem is not None:
            return 0, f"ResourceClaimTemplate {template}: {problem}"
        problems = [f"ResourceClaimTemplate {template}: {detail}" for detail in self._selector_problems(claim)]
        if problems:  # every request's problem, as Kueue aggregates its field errors
            return 0, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        gpus = 0
        for device_class, count in per_class.items():
            resource = self.mapping.get(device_class)
            if resource is None:
                return 0, f"DeviceClass {device_class} is not mapped in DRA configuration for podset {POD_SET}"
            if resource == GPU_RESOURCE:
                gpus += count
            else:
                self.elsewhere.add(resource)
        return gpus, None

    @staticmethod
    def _devices_per_class(claim: ClaimSpec) -> tuple[dict[str, int], str | None]:
        """`countDevicesPerClass`: devices per DeviceClass, or the first request's refusal."""
        per_class: dict[str, int] = {}
        for request in claim.requests:
            if request.prioritized:
                return {}, "FirstAvailable device selection is not supported"
            exactly = request.alternatives[0]
            if exactly.admin_access:
                continue
            if exactly.allocation_mode == ALL:
                return {}, "AllocationMode 'All' is not supported"
            per_class[exactly.device_class] = per_class.get(exactly.device_class, 0) + exactly.count
        return per_class, None

    def _selector_problems(self, claim: ClaimSpec) -> list[str]:
        """`validateCELSelectorsAgainstDevices`: per request with selectors, in order, whether
        its class's and its own selectors match `count` devices of the cluster not yet matched
        for an earlier request of the claim (an admin-access request too)."""
        matched: set[int] = set()
        problems: list[str] = []
        for request in claim.requests:
            exactly = request.alternatives[0]
            if not exactly.selectors:
                continue
            device_class = self.inputs.classes.get(exactly.device_class)
            if device_class is None:
                problems.append(f"failed to get DeviceClass {exactly.device_class}: "
                                f'deviceclasses.resource.k8s.io "{exactly.device_class}" not found')
                continue
            needed = 0 if exactly.allocation_mode == ALL else exactly.count
            try:
                found = self._match(device_class.selectors + exactly.selectors, matched, needed)
            except SelectorError as error:
                problems.append(f"CEL evaluation failed for DeviceClass {exactly.device_class}: {error}")
                continue
            if found < needed:
                problems.append(f"insufficient matching devices for CEL selector in DeviceClass "
                                f"{exactly.device_class}: {found} device(s) match in the cluster but {needed} requested")
        return problems

    def _match(self, selectors: tuple[str, ...], matched: set[int], needed: int) -> int:
        """`countMatchingDevices`: marks matching devices not marked yet, up to `needed` (at
        least one); raises `SelectorError` for a selector that cannot be decided."""
        if self._cluster_devices is None:
            self._cluster_devices = [device for devices in self.inputs.devices.values() for device in devices]
        found = 0
        for index, device in enumerate(self._cluster_devices):
            if index in matched or not all(self.matcher.matches(expression, device) for expression in selectors):
                continue
            matched.add(index)
            found += 1
            if found >= needed:
                break
        return found
