"""`python -m benchmarks.aaic_replay`: the same as `gpu-finops experiment aaic` (gpu_finops/aaic.py)."""

import sys

from gpu_finops.aaic import main

if __name__ == "__main__":
    sys.exit(main())
