"""Experiments that use the scheduler's pieces directly (not the replay): the FGD
fragmentation study on the openb pod lists, and the inputs of the AAIC gang replay."""
