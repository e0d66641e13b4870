"""Figures the README and docs quote about the demo, computed from the demo's own database.

A figure sits in the text between markers, ``<!-- demo:NAME -->value<!-- /demo -->`` (the value
may span lines, e.g. a whole command block). ``make docs`` rewrites every marked value from the
database the demo just built; ``--check`` (the docs test) lists every value that drifted, so a
change that moves the demo's numbers fails until the docs are regenerated. Nobody types a demo
number by hand.

    python -m gpu_finops.docs_figures --db demo-out/gpu-finops.duckdb README.md docs/*.md
    python -m gpu_finops.docs_figures --db demo-out/gpu-finops.duckdb --check README.md docs/*.md

``--advice DIR`` also rewrites ``<!-- advice:NAME -->value<!-- /advice -->`` from the
``advise quotas`` run in DIR (its advice.json): the README's advice run, which ``make docs``
runs on the demo beside the database.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

MARKED = re.compile(r"<!-- demo:(?P<name>[a-z0-9_]+) -->(?P<value>.*?)<!-- /demo -->", re.DOTALL)
ADVICE_MARKED = re.compile(r"<!-- advice:(?P<name>[a-z0-9_]+) -->(?P<value>.*?)<!-- /advice -->", re.DOTALL)
GANG_PROFILE = "gang-v1.37"
POD_PROFILE = "kube-default"


@dataclass(frozen=True)
class DemoFacts:
    """What the demo's database says, read once: per profile, steady-phase GPU-hours by usage
    class, waits over every workload, and the workload the README explains."""

    steady_gpu_hours: dict[tuple[str, str], float]
    p95_wait_h: dict[str, float]
    finished: dict[str, int]
    run_ids: dict[str, str]
    explained: str
    explained_wait_h: float
    explained_message: str
    efficiency: dict[str, tuple[float, float, float, float]]  # active, allocated idle GPU-h; their costs
    unallocated_idle_cost: dict[str, float]


def _run_ids(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    runs = dict(con.execute("SELECT profile, run_id FROM dim_runs ORDER BY run_id").fetchall())
    missing = {GANG_PROFILE, POD_PROFILE} - set(runs)
    if missing:
        raise SystemExit(f"the database holds no {', '.join(sorted(missing))} run: is it the demo's?")
    return runs


def read_facts(db: Path) -> DemoFacts:
    con = duckdb.connect(str(db), read_only=True)
    try:
        runs = _run_ids(con)
        by_run = {run: profile for profile, run in runs.items()}
        steady = {
            (by_run[run], usage): float(hours)
            for run, usage, hours in con.execute(
                """SELECT x_RunId, x_UsageClass, sum(PricingQuantity) FROM focus_cost_records
                   WHERE ChargeCategory = 'Usage' AND x_Resource = 'gpu' AND x_Phase = 'steady'
                   GROUP BY ALL""").fetchall() if run in by_run
        }
        waits = con.execute(
            """SELECT run_id, quantile_cont(wait_s, 0.95) / 3600.0,
                      count(*) FILTER (WHERE final_state = 'finished')
               FROM fct_workloads WHERE final_state <> 'rejected' GROUP BY run_id""").fetchall()
        # The job the README explains: the training run that waited longest without gangs.
        explained, wait_s = con.execute(
            """SELECT workload_id, wait_s FROM fct_workloads
               WHERE run_id = $run AND kind = 'training' AND final_state = 'finished'
               ORDER BY wait_s DESC, workload_id LIMIT 1""", {"run": runs[POD_PROFILE]}).fetchone() or ("", 0)
        # A message it really got: the one it got most often (ties: the first).
        message = con.execute(
            """SELECT reason || ' — ' || message FROM fct_workload_timeline
               WHERE run_id = $run AND workload_id = $workload AND event = 'pending'
               GROUP BY reason, message ORDER BY count(*) DESC, min(seq) LIMIT 1""",
            {"run": runs[POD_PROFILE], "workload": explained}).fetchone()
        split = con.execute(
            """SELECT x_RunId,
                      coalesce(sum(PricingQuantity) FILTER (WHERE x_UsageSubClass = 'active'), 0),
                      coalesce(sum(PricingQuantity) FILTER (WHERE x_UsageSubClass = 'allocated_idle'), 0),
                      coalesce(sum(EffectiveCost) FILTER (WHERE x_UsageSubClass = 'active'), 0),
                      coalesce(sum(EffectiveCost) FILTER (WHERE x_UsageSubClass = 'allocated_idle'), 0),
                      coalesce(sum(EffectiveCost) FILTER (WHERE x_UsageClass = 'idle'), 0)
               FROM focus_cost_records
               WHERE ChargeCategory = 'Usage' AND x_Resource = 'gpu' AND x_Phase = 'steady'
               GROUP BY ALL""").fetchall()
    finally:
        con.close()
    return DemoFacts(
        steady_gpu_hours=steady,
        p95_wait_h={by_run[run]: float(p95) for run, p95, _ in waits if run in by_run},
        finished={by_run[run]: int(done) for run, _, done in waits if run in by_run},
        run_ids=runs,
        explained=str(explained),
        explained_wait_h=float(wait_s or 0) / 3600,
        explained_message=str(message[0]) if message else "",
        efficiency={by_run[run]: (float(a), float(i), float(ac), float(ic)) for run, a, i, ac, ic, _ in split
                    if run in by_run},
        unallocated_idle_cost={by_run[run]: float(idle) for run, *_, idle in split if run in by_run},
    )


def _gpu_h(value: float) -> str:
    return f"{value:,.0f}"


def _story(f: DemoFacts) -> str:
    """The comparison, worded whichever way the demo falls."""
    pod_p95, gang_p95 = f.p95_wait_h[POD_PROFILE], f.p95_wait_h[GANG_PROFILE]
    pod_useful = f.steady_gpu_hours.get((POD_PROFILE, "productive"), 0.0)
    gang_useful = f.steady_gpu_hours.get((GANG_PROFILE, "productive"), 0.0)
    partial = f.steady_gpu_hours.get((POD_PROFILE, "gang_wait"), 0.0)
    gang_partial = f.steady_gpu_hours.get((GANG_PROFILE, "gang_wait"), 0.0)
    waits = "shorter" if pod_p95 < gang_p95 else "longer"
    useful = "more" if pod_useful > gang_useful else "fewer"
    return (
        f"on the demo, `{POD_PROFILE}` has {waits} waits than `{GANG_PROFILE}` (p95 "
        f"{pod_p95:,.1f} h against {gang_p95:,.1f} h) and {useful} productive GPU-hours in the "
        f"steady phase ({_gpu_h(pod_useful)} against {_gpu_h(gang_useful)}). What it pays for "
        f"placing pods one by one is partial placement: {_gpu_h(partial)} GPU-hours held by "
        f"gangs waiting for their last pods (`gang_wait`), against {_gpu_h(gang_partial)} under "
        f"`{GANG_PROFILE}`"
    )


def _efficiency(f: DemoFacts) -> str:
    """What the measured utilisation says of the GPU-hours workloads held (issue 30)."""
    active, held_idle, _, held_idle_cost = f.efficiency.get(GANG_PROFILE, (0.0, 0.0, 0.0, 0.0))
    measured = active + held_idle
    share = f"{active / measured:.1%}" if measured else "unknown"
    return (
        f"under `{GANG_PROFILE}` in the steady phase, {share} of the measured productive "
        f"GPU-hours kept the GPUs' engines busy ({_gpu_h(active)} active, {_gpu_h(held_idle)} "
        f"allocated but idle): ${held_idle_cost:,.0f} of allocated idle beside "
        f"${f.unallocated_idle_cost.get(GANG_PROFILE, 0.0):,.0f} of unallocated idle"
    )


FIGURES: dict[str, Callable[[DemoFacts], str]] = {
    "efficiency": _efficiency,
    "story": _story,
    "gang_wait_kube_default": lambda f: _gpu_h(f.steady_gpu_hours.get((POD_PROFILE, "gang_wait"), 0.0)),
    "productive_kube_default": lambda f: _gpu_h(f.steady_gpu_hours.get((POD_PROFILE, "productive"), 0.0)),
    "productive_gang": lambda f: _gpu_h(f.steady_gpu_hours.get((GANG_PROFILE, "productive"), 0.0)),
    "p95_wait_kube_default": lambda f: f"{f.p95_wait_h[POD_PROFILE]:,.1f} h",
    "p95_wait_gang": lambda f: f"{f.p95_wait_h[GANG_PROFILE]:,.1f} h",
    "explained_workload": lambda f: f"`{f.explained}`",
    "explained_wait": lambda f: f"{f.explained_wait_h:,.0f} h",
    "explained_message": lambda f: f"`{f.explained_message}`",
    "explain_commands": lambda f: (
        "\n```sh\n"
        f".venv/bin/gpu-finops explain --db demo-out/gpu-finops.duckdb --run-id {f.run_ids[POD_PROFILE]} {f.explained}\n"
        f".venv/bin/gpu-finops explain --run-dir demo-out/run-kube-default {f.explained}\n"
        "```\n"
    ),
}


def render(text: str, facts: DemoFacts) -> str:
    """``text`` with every marked figure rewritten; an unknown name is an error."""
    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in FIGURES:
            raise SystemExit(f"unknown demo figure {name!r}: known: {', '.join(sorted(FIGURES))}")
        return f"<!-- demo:{name} -->{FIGURES[name](facts)}<!-- /demo -->"
    return MARKED.sub(replace, text)


def drifted(text: str, facts: DemoFacts) -> list[tuple[str, str, str]]:
    """(name, in the text, from the demo) for every marked figure that differs."""
    rendered = {m.start(): m for m in MARKED.finditer(render(text, facts))}
    out = []
    for original, fresh in zip(MARKED.finditer(text), rendered.values(), strict=True):
        if original.group("value") != fresh.group("value"):
            out.append((original.group("name"), original.group("value"), fresh.group("value")))
    return out


def _advice_summary(advice: dict) -> str:
    """What the advice run recommends, beside today, worded from its advice.json."""
    chosen, today = advice["recommended"], advice["today"]
    if chosen is None:
        return f"{advice['trials']} trials, none finished: nothing to recommend"
    figures = chosen["figures"]
    teams = {t["team"]: t for t in today["teams"]}
    waits = ", ".join(f"{t['team']} {teams[t['team']]['p95_wait_h']:,.1f} h → {t['p95_wait_h']:,.1f} h"
                      for t in figures["teams"] if t["team"] in teams)
    return (f"of {advice['trials']} trials, {len(advice['pareto'])} on the Pareto front, it recommends trial "
            f"{chosen['trial']}{'' if chosen['feasible'] else ' (no trial met every target: the nearest)'}: idle cost "
            f"${figures['idle_cost']:,.0f} against today's ${today['idle_cost']:,.0f}, cost of delay "
            f"${figures['cost_of_delay']:,.0f} against ${today['cost_of_delay']:,.0f}; p95 waits today → "
            f"recommended: {waits}")


ADVICE_FIGURES: dict[str, Callable[[dict], str]] = {
    "summary": _advice_summary,
    "trials": lambda a: f"{a['trials']}",
}


def render_advice(text: str, advice: dict) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in ADVICE_FIGURES:
            raise SystemExit(f"unknown advice figure {name!r}: known: {', '.join(sorted(ADVICE_FIGURES))}")
        return f"<!-- advice:{name} -->{ADVICE_FIGURES[name](advice)}<!-- /advice -->"
    return ADVICE_MARKED.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, type=Path, help="the demo's gpu-finops.duckdb")
    parser.add_argument("--advice", type=Path, help="the DIR of an advise quotas run on the demo")
    parser.add_argument("--check", action="store_true", help="report drift, change nothing (exit 1 on drift)")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    facts = read_facts(args.db)
    advice = json.loads((args.advice / "advice.json").read_text(encoding="utf-8")) if args.advice else None
    drift = 0
    for path in args.files:
        text = path.read_text(encoding="utf-8")
        if args.check:
            for name, old, new in drifted(text, facts):
                drift += 1
                print(f"{path}: demo:{name} says {old.strip()!r}, the demo gives {new.strip()!r}")
        else:
            fresh = render(text, facts)
            if advice is not None:
                fresh = render_advice(fresh, advice)
            if fresh != text:
                path.write_text(fresh, encoding="utf-8")
                print(f"{path}: demo figures rewritten")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
