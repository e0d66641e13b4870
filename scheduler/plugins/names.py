"""Plugin names, in one place, as profiles spell them."""

PRIORITY_SORT = "PrioritySort"
COSCHEDULING = "Coscheduling"
GPU_FIT = "GpuFit"
DYNAMIC_RESOURCES = "DynamicResources"
NODE_RESOURCES_FIT = "NodeResourcesFit"
NODE_RESOURCES_BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
RANDOM_SCORE = "Random"
DOT_PROD = "DotProd"
GPU_PACKING = "GpuPacking"
GPU_CLUSTERING = "GpuClustering"
FGD = "FGD"
GANG_PERMIT = "GangPermit"
WORKLOAD_PREEMPTION = "WorkloadPreemption"
DEFAULT_PREEMPTION = "DefaultPreemption"
# KEP-5710's search for the lowest sufficient priority level: a proposal upstream dropped
PRIORITY_LEVEL_SEARCH = "PriorityLevelSearchPreemption"

# The plugins whose factories use the replay's seeded generator: RandomScore's scores and
# DefaultPreemption's random first candidate node (DryRunPreemption's offset). With none of
# them and the tie rule not `random`, a profile's replays do not depend on the seed.
SEEDED = frozenset({RANDOM_SCORE, DEFAULT_PREEMPTION})
