"""benchmarks.same_tables, the check a model rewrite passes: two builds' tables as multisets of
rows. It must see a change in the last bit of one value, a repeated row and a missing table."""

from __future__ import annotations

import duckdb

from benchmarks.same_tables import differences, main


def _database(path, rows, extra_table=False):
    con = duckdb.connect(str(path))
    con.execute("create table cells (node varchar, gpu_hours double)")
    con.executemany("insert into cells values (?, ?)", rows)
    con.execute("create table gpu_finops_build as select 'x' as built_by")  # the build's record: not compared
    if extra_table:
        con.execute("create table extra as select 1 as one")
    con.close()
    return path


def test_equal_tables_in_any_order_are_the_same(tmp_path):
    before = _database(tmp_path / "before.duckdb", [("a", 0.1), ("b", 0.2)])
    after = _database(tmp_path / "after.duckdb", [("b", 0.2), ("a", 0.1)])
    assert differences(before, after) == {}
    assert main([str(before), str(after)]) == 0


def test_a_last_bit_a_repeated_row_and_a_missing_table_differ(tmp_path, capsys):
    before = _database(tmp_path / "before.duckdb", [("a", 0.1), ("b", 0.2)], extra_table=True)
    last_bit = _database(tmp_path / "last_bit.duckdb", [("a", 0.1), ("b", 0.2 + 2.8e-17)])
    repeated = _database(tmp_path / "repeated.duckdb", [("a", 0.1), ("b", 0.2), ("b", 0.2)], extra_table=True)
    assert differences(before, last_bit) == {
        "cells": "1 rows only before, 1 only after", "extra": "only in before"}
    assert differences(before, repeated) == {"cells": "0 rows only before, 1 only after"}
    assert main([str(before), str(repeated)]) == 1
    assert "cells: 0 rows only before, 1 only after" in capsys.readouterr().out
