"""The `gpu-finops` command line: wires scheduler → pipeline → surfaces.

This package is the composition root. It is the only code that imports all three stages;
the stages themselves meet only through files (DESIGN §2).
"""
