"""`python -m benchmarks.aaic_replay`: the same as `gpu-finops experiment aaic` (gpu_finops/experiments/aaic.py)."""

import sys

from gpu_finops.experiments.aaic import main

if __name__ == "__main__":
    sys.exit(main())
