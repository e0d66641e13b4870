"""GPUs through Dynamic Resource Allocation (docs/dra.md): devices published in ResourceSlices,
DeviceClasses with CEL selectors, claims and their allocation on a node."""
