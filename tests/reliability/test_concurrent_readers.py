"""Readers keep answering while `build` rewrites the database, and see only complete states.

`build` writes a new database file and renames it over the old one. The test starts from a
database with run ``a``, then rebuilds it with runs ``a`` and ``b`` in another process while
three readers query in a loop:

- the dashboard's cached queries (`dashboards.cache.query`, one connection per file version),
- its SQL console page (`dashboards.sql.query_frame` on a cursor of that same connection),
  both in this process, as in a dashboard server;
- `gpu-finops sql`, a process per statement.

Every answer must be one of the two complete states (the old database or the new one, read
through one statement that spans several tables), no reader may fail, and once the rebuild
is over every reader must see the new state: none stays on the old file.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reliability.killing import run_command

# One statement over several marts: a torn database would show runs without their costs.
STATE_QUERY = """
    SELECT (SELECT string_agg(run_id, ',' ORDER BY run_id) FROM dim_runs) AS runs,
           (SELECT count(*) FROM focus_cost_records) AS records,
           (SELECT round(sum(EffectiveCost), 6) FROM focus_cost_records) AS cost,
           (SELECT count(*) FROM fct_workloads) AS workloads
"""
SETTLE_S = 20.0  # after the rebuild, how long a reader may take to see it (a noisy machine)
PAUSE_S = 0.05  # between two reads: the rebuild needs the CPU too


def _state_via_sql(db: Path) -> tuple:
    outcome = run_command(["sql", "--db", str(db), "--format", "json", STATE_QUERY])
    assert outcome.exit_code == 0, f"gpu-finops sql failed: {outcome}"
    (row,) = json.loads(outcome.stdout)
    return tuple(row.values())


def _state_via_console(db: Path) -> tuple:
    from dashboards import cache
    from dashboards.sql import query_frame

    # As the SQL console page does: a cursor of the dashboard's connection, fresh per query.
    frame, _ = query_frame(db, STATE_QUERY, connect=lambda: cache.cursor(cache.DbRef.of(db)))
    return tuple(frame.iloc[0].tolist())


def _state_via_dashboard(db: Path) -> tuple:
    from dashboards import cache, data

    runs = cache.query(cache.DbRef.of(db), data.list_runs)
    return (",".join(sorted(runs["run_id"])),)


def _read_in_a_loop(read: Callable[[], tuple], stop: threading.Event, seen: list, errors: list) -> None:
    while not stop.is_set():
        try:
            seen.append((time.monotonic(), read()))
        except Exception as error:  # noqa: BLE001 - every failure is a finding
            errors.append(repr(error))
        stop.wait(PAUSE_S)


@pytest.mark.filterwarnings("ignore::UserWarning")  # Streamlit caches outside a running app
def test_readers_see_only_complete_states_while_build_swaps_the_database(workspace, tmp_path):
    from pipeline.build import build

    run_a, run_b = workspace.copy_runs(tmp_path)
    prices, db = workspace.inputs / "prices.csv", tmp_path / "marts.duckdb"
    build([run_a], prices, db, show_progress=False)
    old = (_state_via_sql(db), _state_via_dashboard(db))
    readers = {"sql": lambda: _state_via_sql(db), "console": lambda: _state_via_console(db),
               "dashboard": lambda: _state_via_dashboard(db)}
    seen: dict[str, list] = {name: [] for name in readers}
    errors: list[str] = []
    stop = threading.Event()
    threads = [threading.Thread(target=_read_in_a_loop, args=(read, stop, seen[name], errors))
               for name, read in readers.items()]
    for thread in threads:
        thread.start()
    try:
        rebuild = run_command(["build", str(run_a), str(run_b), "--prices", str(prices), "--db", str(db), "-q"])
        rebuilt_at = time.monotonic()
        deadline = rebuilt_at + SETTLE_S
        new_sql = None
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if all(any(t > rebuilt_at and "b" in str(s[0]) for t, s in seen[name]) for name in readers):
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert rebuild.exit_code == 0
    assert not errors, f"readers failed during the rebuild: {errors[:3]}"
    new_sql = _state_via_sql(db)
    complete = {"sql": {old[0], new_sql}, "console": {old[0], new_sql},
                "dashboard": {old[1], (new_sql[0],)}}
    for name, observations in seen.items():
        states = {state for _, state in observations}
        assert states <= complete[name], f"{name} saw a state that is neither old nor new: {states - complete[name]}"
        assert old[0 if name != "dashboard" else 1] in states, f"{name} never read during the rebuild"
        latest = [state for moment, state in observations if moment > rebuilt_at][-1:]
        assert latest and "b" in str(latest[0][0]), f"{name} still reads the old database after the rebuild"
