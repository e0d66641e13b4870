"""`gpu-finops --version`: the version from the package metadata, which build of the scheduler
this process runs, and the git commit when known (`scheduler/compiled.py` decides each)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def version_line() -> str:
    import scheduler
    from scheduler.compiled import build_record

    record = build_record(scheduler.BUILD)
    return f"gpu-finops {record['version']} ({record['scheduler']} scheduler, commit {record['commit'] or 'unknown'})"


class PrintVersion(argparse.Action):
    """Prints the version line and exits 0; computed only when asked (the commit may need git)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(version_line(), file=sys.stdout)
        parser.exit(0)
