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

from pipeline.connect import connect

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
    steady_idle: dict[tuple[str, str], float]  # (profile, idle cause) -> steady GPU-hours
    events: dict[tuple[str, str, str], int]  # (profile, event, reason or "") -> rows of the log
    most_preempted: dict[str, int]  # per profile, the preempted pod events of the workload with most
    mean_wait_h: dict[str, float]
    workloads: int  # of the trace (one run's)
    nodes: dict[tuple[str, str], tuple[int, int]]  # (GPU model, pricing category) -> nodes, GPUs
    # gang-v1.37's steady window by cost-center under the window policy: (group, charged $)
    by_cost_center: tuple[tuple[str, float], ...] = ()
    # gang-v1.37's GPU commitment pools over the run: (GPU model, covered GPU-h, eligible GPU-h)
    commitment_coverage: tuple[tuple[str, float, float], ...] = ()
    # gang-v1.37's preemption chains (fct_preemption_cascades): preempted pod events, chains, of
    # them preempted in a cascade (depth > 1), the deepest level, GPU-hours lost in chains; and
    # its costliest chain: origin preemptor, its priority, pods preempted, GPU-hours lost
    cascades: tuple[int, int, int, int, float] | None = None
    costliest_chain: tuple[str, int, int, float] | None = None


def _run_ids(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    runs = dict(con.execute("SELECT profile, run_id FROM dim_runs ORDER BY run_id").fetchall())
    missing = {GANG_PROFILE, POD_PROFILE} - set(runs)
    if missing:
        raise SystemExit(f"the database holds no {', '.join(sorted(missing))} run: is it the demo's?")
    return runs


def read_facts(db: Path) -> DemoFacts:
    con = connect(db, read_only=True)
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
                      count(*) FILTER (WHERE final_state = 'finished'), avg(wait_s) / 3600.0
               FROM fct_workloads WHERE final_state <> 'rejected' GROUP BY run_id""").fetchall()
        idle = con.execute(
            """SELECT x_RunId, x_IdleReason, sum(PricingQuantity) FROM focus_cost_records
               WHERE ChargeCategory = 'Usage' AND x_Resource = 'gpu' AND x_Phase = 'steady'
                 AND x_UsageClass = 'idle' GROUP BY ALL""").fetchall()
        events = con.execute(
            "SELECT run_id, event, coalesce(reason, ''), count(*) FROM raw_events GROUP BY ALL").fetchall()
        most_preempted = con.execute(
            """SELECT run_id, max(n) FROM (SELECT run_id, workload_id, count(*) AS n FROM raw_events
               WHERE event = 'preempted' GROUP BY ALL) GROUP BY run_id""").fetchall()
        workloads = con.execute(
            "SELECT count(*) FROM fct_workloads WHERE run_id = $run", {"run": runs[GANG_PROFILE]}).fetchone()
        nodes = con.execute(
            """SELECT gpu_model, pricing_category, count(*), sum(gpus) FROM dim_nodes WHERE run_id = $run
               GROUP BY ALL""", {"run": runs[GANG_PROFILE]}).fetchall()
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
        by_cost_center = con.execute(
            """SELECT allocation, sum(charged_cost) FROM fct_label_allocation
               WHERE run_id = $run AND label_key = 'cost-center' AND idle_policy = 'window' AND phase = 'steady'
               GROUP BY allocation HAVING sum(abs(charged_cost)) > 0
               ORDER BY allocation = '__idle__', allocation = '__unallocated__', sum(charged_cost) DESC""",
            {"run": runs[GANG_PROFILE]}).fetchall()
        coverage = con.execute(
            """SELECT gpu_model, sum(used_quantity), sum(eligible_quantity) FROM fct_commitment_utilization
               WHERE run_id = $run AND resource = 'gpu' GROUP BY gpu_model ORDER BY gpu_model""",
            {"run": runs[GANG_PROFILE]}).fetchall()
        cascades, costliest_chain = _cascades(con, runs[GANG_PROFILE])
    finally:
        con.close()
    return DemoFacts(
        cascades=cascades,
        costliest_chain=costliest_chain,
        commitment_coverage=tuple((str(m), float(c), float(e)) for m, c, e in coverage),
        steady_gpu_hours=steady,
        p95_wait_h={by_run[run]: float(p95) for run, p95, _, _ in waits if run in by_run},
        finished={by_run[run]: int(done) for run, _, done, _ in waits if run in by_run},
        mean_wait_h={by_run[run]: float(mean) for run, _, _, mean in waits if run in by_run},
        steady_idle={(by_run[run], str(cause)): float(h) for run, cause, h in idle if run in by_run},
        events={(by_run[run], str(e), str(r)): int(n) for run, e, r, n in events if run in by_run},
        most_preempted={by_run[run]: int(n) for run, n in most_preempted if run in by_run},
        workloads=int(workloads[0]) if workloads else 0,
        nodes={(str(m), str(c)): (int(n), int(g)) for m, c, n, g in nodes},
        run_ids=runs,
        explained=str(explained),
        explained_wait_h=float(wait_s or 0) / 3600,
        explained_message=str(message[0]) if message else "",
        efficiency={by_run[run]: (float(a), float(i), float(ac), float(ic)) for run, a, i, ac, ic, _ in split
                    if run in by_run},
        unallocated_idle_cost={by_run[run]: float(idle) for run, *_, idle in split if run in by_run},
        by_cost_center=tuple((str(group), float(cost)) for group, cost in by_cost_center),
    )


def _cascades(con: duckdb.DuckDBPyConnection, run: str) -> tuple[
        tuple[int, int, int, int, float] | None, tuple[str, int, int, float] | None]:
    """The run's preemption chains and its costliest one; None, None for a database built
    before fct_preemption_cascades."""
    built = con.execute("SELECT count(*) FROM information_schema.tables "
                        "WHERE table_name = 'fct_preemption_cascades'").fetchone()
    if not built or not built[0]:
        return None, None
    totals = con.execute(
        """SELECT count(*), count(DISTINCT chain_id), count(*) FILTER (WHERE depth > 1),
                  coalesce(max(depth), 0), coalesce(sum(lost_gpu_hours), 0)
           FROM fct_preemption_cascades WHERE run_id = $run""", {"run": run}).fetchone()
    top = con.execute(
        """SELECT any_value(c.root_workload_id), any_value(w.priority), count(*), sum(c.lost_gpu_hours)
           FROM fct_preemption_cascades c
           LEFT JOIN fct_workloads w ON w.run_id = c.run_id AND w.workload_id = c.root_workload_id
           WHERE c.run_id = $run GROUP BY c.chain_id
           ORDER BY sum(c.lost_gpu_hours) DESC, c.chain_id LIMIT 1""", {"run": run}).fetchone()
    assert totals is not None  # an aggregate always returns one row
    events, chains, cascaded, deepest, lost = totals
    return ((int(events), int(chains), int(cascaded), int(deepest), float(lost)),
            None if top is None else (str(top[0]), int(top[1] or 0), int(top[2]), float(top[3])))


def _cascade_story(f: DemoFacts) -> str:
    """What the preemption chains of `gang-v1.37` say (issue 43)."""
    if f.cascades is None:
        return "(this database was built before preemption chains were recorded: rebuild the demo)"
    events, chains, cascaded, deepest, lost = f.cascades
    text = (f"under `{GANG_PROFILE}`, the {events:,} preempted pod events form {chains:,} chains; "
            f"{cascaded:,} of them were preempted by a workload still recovering from its own "
            f"preemption (up to {deepest:,} levels deep), and the chains lost {_gpu_h(lost)} GPU-hours")
    if f.costliest_chain is not None:
        origin, priority, pods, chain_lost = f.costliest_chain
        text += (f"; the costliest, started by `{origin}` (priority {priority:,}), preempted "
                 f"{pods:,} pods and lost {_gpu_h(chain_lost)} GPU-hours")
    return text


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


def _by_cost_center(f: DemoFacts) -> str:
    names = {"__unallocated__": "Unlabelled", "__idle__": "Unallocated (idle)"}
    parts = " + ".join(f"`{names.get(group, group)}` ${cost:,.0f}" for group, cost in f.by_cost_center)
    return f"{parts} = ${sum(cost for _, cost in f.by_cost_center):,.0f}"


def _steady(f: DemoFacts, profile: str) -> tuple[float, float]:
    """(capacity, allocated) GPU-hours of the steady phase."""
    total = sum(h for (p, _), h in f.steady_gpu_hours.items() if p == profile)
    return total, total - f.steady_gpu_hours.get((profile, "idle"), 0.0)


def _count(f: DemoFacts, profile: str, event: str, reason: str | None = None) -> int:
    return sum(n for (p, e, r), n in f.events.items() if p == profile and e == event and reason in (None, r))


def _rules_table(f: DemoFacts) -> str:
    """What the replay's rules give on the demo today, both profiles under Kueue (fidelity.md)."""
    rows: list[tuple[str, Callable[[str], str]]] = [
        *[(f"steady idle: {cause.replace('_', ' ')} (GPU-h)",
           lambda p, c=cause: _gpu_h(f.steady_idle.get((p, c), 0.0)))
          for cause in ("quota", "no_demand", "capacity_shortfall", "fragmentation", "shared_device_slack",
                        "scheduling_latency")],
        ("steady partial placement / lost to preemption (GPU-h)",
         lambda p: f"{_gpu_h(f.steady_gpu_hours.get((p, 'gang_wait'), 0.0))} / "
                   f"{_gpu_h(f.steady_gpu_hours.get((p, 'lost_to_preemption'), 0.0))}"),
        ("steady allocation rate", lambda p: f"{_steady(f, p)[1] / _steady(f, p)[0]:.1%}".replace("%", " %")),
        ("preempted pod events (most of one workload)",
         lambda p: f"{_count(f, p, 'preempted'):,} ({f.most_preempted.get(p, 0):,})"),
        ("PodsReadyTimeout requeues", lambda p: f"{_count(f, p, 'requeued', 'PodsReadyTimeout'):,}"),
        ("events in the log", lambda p: f"{sum(n for (q, _, _), n in f.events.items() if q == p):,}"),
        ("mean / p95 wait (h)", lambda p: f"{f.mean_wait_h[p]:,.2f} / {f.p95_wait_h[p]:,.2f}"),
    ]
    lines = [f"| figure | `{GANG_PROFILE}` + Kueue | `{POD_PROFILE}` + Kueue |", "|---|---:|---:|"]
    lines += [f"| {label} | {cell(GANG_PROFILE)} | {cell(POD_PROFILE)} |" for label, cell in rows]
    return "\n" + "\n".join(lines) + "\n"


def _cluster(f: DemoFacts) -> str:
    nodes = sum(n for n, _ in f.nodes.values())
    gpus = sum(g for _, g in f.nodes.values())
    return f"{nodes:,}-node, {gpus:,}-GPU"


def _committed(f: DemoFacts) -> str:
    """The demo's commitment coverage (fct_commitment_utilization): committed GPU-hours used over
    the commitment-eligible GPU-hours used (those and on-demand usage; spot is not eligible)."""
    model, covered, eligible = f.commitment_coverage[0]
    return (f"{covered:,.0f} covered of {eligible:,.0f} eligible {model} GPU-hours used: "
            f"{covered / eligible:.2%}").replace("%", " %")


FIGURES: dict[str, Callable[[DemoFacts], str]] = {
    "by_cost_center": _by_cost_center,
    "rules_table": _rules_table,
    "cluster": _cluster,
    "committed_coverage": _committed,
    "workloads": lambda f: f"{f.workloads:,}",
    "gpus": lambda f: f"{sum(g for _, g in f.nodes.values()):,}",
    "efficiency": _efficiency,
    "cascades": _cascade_story,
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
    verb = "its best is trial" if chosen.get("change") is False else "it recommends trial"  # within the noise: no change
    return (f"of {advice['trials']} trials, {len(advice['pareto'])} on the Pareto front, {verb} "
            f"{chosen['trial']}{'' if chosen['feasible'] else ' (no trial met every target: the nearest)'}: idle cost "
            f"${figures['idle_cost']:,.0f} against today's ${today['idle_cost']:,.0f}, cost of delay "
            f"${figures['cost_of_delay']:,.0f} against ${today['cost_of_delay']:,.0f}; p95 waits today → "
            f"recommended: {waits}{_noise(advice)}")


def _noise(advice: dict) -> str:
    """The recommendation against today over the replay seeds (absent from an advice.json before them)."""
    chosen = advice["recommended"]
    if chosen.get("improvement") is None:
        return ""
    seeds = advice["inputs"].get("seeds", 1)
    ci95 = chosen.get("improvement_ci95")
    spread = f" ± ${ci95:,.0f} (95 %)" if ci95 is not None else ""
    over = f"means over {seeds} replay seeds" if seeds > 1 else "one replay per configuration"
    return (f"; {over}: it beats today by ${chosen['improvement']:,.0f}{spread}"
            if chosen.get("change") else
            f"; {over}: its improvement over today, ${chosen['improvement']:,.0f}{spread}, "
            "is within the noise: no change recommended")


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
