"""Compare every table of two pipeline builds as multisets of rows (DuckDB `EXCEPT ALL` both ways).

A rewrite of a model must leave its content as it was: same rows, same values to the last bit.
Row order is not compared (tables are written without keeping it). The build's own record
(`gpu_finops_build`) is left out. Exit status 1 when a table differs or is missing on one side.

    .venv/bin/python -m benchmarks.same_tables BEFORE.duckdb AFTER.duckdb
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

from pipeline.build import BUILD_MEMORY_LIMIT
from pipeline.connect import BUILD_TABLE


def _tables(con: duckdb.DuckDBPyConnection, catalog: str) -> set[str]:
    rows = con.execute(
        "select table_name from information_schema.tables where table_catalog = ? and table_type = 'BASE TABLE'",
        [catalog],
    ).fetchall()
    return {name for (name,) in rows} - {BUILD_TABLE}


def differences(before: Path, after: Path) -> dict[str, str]:
    """table -> what differs (rows only on one side, or a missing table); equal tables are absent."""
    con = duckdb.connect()
    # bounded, spilling next to the after database: EXCEPT ALL of two bench-1m FOCUS tables
    # held 17 GiB unbounded (in memory there is nowhere to spill by default)
    con.execute(f"SET memory_limit = '{BUILD_MEMORY_LIMIT}'")
    con.execute(f"SET temp_directory = '{after.parent / (after.name + '.same_tables.tmp')}'")
    con.execute(f"attach '{before}' as before_db (read_only)")
    con.execute(f"attach '{after}' as after_db (read_only)")
    found: dict[str, str] = {}
    left, right = _tables(con, "before_db"), _tables(con, "after_db")
    for name in sorted(left ^ right):
        found[name] = f"only in {'before' if name in left else 'after'}"
    for name in sorted(left & right):
        only_before, only_after = (
            (con.execute(f'select count(*) from (select * from {a}."{name}" except all select * from {b}."{name}")')
             .fetchone() or (0,))[0]
            for a, b in (("before_db", "after_db"), ("after_db", "before_db"))
        )
        if only_before or only_after:
            found[name] = f"{only_before} rows only before, {only_after} only after"
    con.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.same_tables")
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    found = differences(args.before, args.after)
    for name, what in found.items():
        print(f"{name}: {what}")
    if not found:
        print("every table equal")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
