"""``gpu-finops advise quotas``: Kueue quotas recommended from a replay of the cluster's history.

0. Before any replay: the counts and seeds, the inputs (objectives with finite targets for teams
   the trace has), and everything in DIR the run would replace (`gpu_finops.advise.folder`),
   under DIR's lock, held to the end.
1. Replay today: the trace under the current manifests (run ``today``), once per replay seed
   (``--seeds``, `gpu_finops.advise.seeds`), each built and its figures read
   (`gpu_finops.advise.figures`); today's figures are their means.
2. Create (whole, renamed into place) or resume the Optuna study in ``DIR/study.db``
   (SQLite). A new study starts with two enqueued trials: the demand-proportional point
   (`SearchSpace.demand_params`) and today's manifests brought within the bounds
   (`SearchSpace.today_params`): two principled starts a sampler then improves on, and a recommendation never worse than today within the space.
3. Trials go in batches of ``batch``: each batch's trials are asked of a sampler seeded from
   ``(seed, batch number)``, written as manifests, replayed under every replay seed by the
   sweep's executors (local worker processes or Ray tasks), built, and told back in trial order
   with the means over the seeds (each seed's figures kept beside them). The trials a seed gives
   depend on the seed, the batch size and the inputs only: not on the executor, the number of
   workers, or in which order replays finish.
4. A rerun resumes: finished trials are kept, a trial left running by an interrupted or killed
   process is replayed again with its own parameters, and the study continues to ``trials``.
   Ctrl-C or SIGTERM stops the workers and leaves the batch's trials running for that rerun (an
   interrupt DuckDB turns into an error while a trial's figures are built included).
5. The outputs (`gpu_finops.advise.outputs`): the recommendation, a change only when it beats
   today beyond the noise of the seeds (`gpu_finops.advise.seeds.improvement`), trials.csv, pareto.csv, recommended.yaml and its
   diff, the Pareto chart, per-team figures of the recommended point beside today's, and one
   DuckDB file with both runs built and the advice tables.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from gpu_finops.advise.figures import TABLES as FIGURE_TABLES
from gpu_finops.advise.figures import RunFigures, figures_of
from gpu_finops.advise.folder import (
    STUDY_FILE,
    STUDY_NAME,
    check_folder,
    create_study_file,
    recorded_identity,
)
from gpu_finops.advise.objectives import Objectives, read_objectives, violations
from gpu_finops.advise.outputs import FILES, write_outputs
from gpu_finops.advise.seeds import (
    MAX_SEEDS,
    mean_figures,
    replay_seeds,
    seed_run_name,
    seeds_that_matter,
)
from gpu_finops.advise.space import SearchSpace
from gpu_finops.advise.trials import Advice, Inputs, Trial
from gpu_finops.interrupts import raise_query_interrupt
from gpu_finops.sweep.executors import LocalExecutor, Outcome, RayExecutor
from gpu_finops.sweep.run import deliver_run, read_json_object
from gpu_finops.sweep.spec import MAX_SCENARIOS
from gpu_finops.sweep.task import DEFAULT_TIMEOUT_S, ScenarioTask, sha256_file
from scheduler.errors import InputError
from scheduler.eventlog import writes
from scheduler.eventlog.writes import output_lock, write_files

STARTUP_TRIALS = 8  # random trials before the sampler models the front (fixed: a seed means one sequence)
TODAY = "today"


def advise_quotas(inputs: Inputs, out: Path, *, trials: int = 50, seed: int = 0, batch: int = 4,
                  executor: str = "local", address: str | None = None, workers: int | None = None,
                  quiet: bool = False, console: Console | None = None,
                  scenario_timeout_s: float | None = DEFAULT_TIMEOUT_S) -> Advice:
    """``scenario_timeout_s``: each replay's time limit (a trial past it fails; None: none).
    Every input and everything in ``out`` it would replace is checked before any replay
    (`gpu_finops.advise.folder`); ``out`` is locked while the command runs."""
    import optuna

    began = time.perf_counter()
    console = console or Console(file=sys.stderr, soft_wrap=True)
    _check_settings(trials, batch, workers, seed, inputs.replay_seed, inputs.seeds)
    for path in (inputs.trace, inputs.cluster, inputs.queues, inputs.prices):
        if not Path(path).is_file():
            raise InputError(path, "file not found")
    objectives = read_objectives(inputs.objectives)
    from scheduler.trace.cluster import read_cluster

    space = SearchSpace(inputs.queues, read_cluster(inputs.cluster), objectives)
    _check_teams(objectives, inputs)
    seeds, why_one = seeds_that_matter(inputs.profile, inputs.seeds)  # said once the inputs are read
    inputs = replace(inputs, seeds=seeds)
    out = out.resolve()
    identity = _identity(inputs, seed, batch)

    def waiting(pid: int | None) -> None:
        console.print(f"waiting for another gpu-finops command{f' (pid {pid})' if pid else ''} writing {out} …",
                      highlight=False, markup=False)

    with output_lock(out, wait_s=writes.LOCK_WAIT_S, waiting=waiting):  # one advise at a time in DIR: the next resumes its study
        check_folder(out, identity, FILES, [inputs.trace, inputs.cluster, inputs.queues, inputs.prices,
                                            inputs.objectives])
        runner = _Runner(inputs, out, executor, address, workers, console)
        runner.timeout_s = scenario_timeout_s
        if why_one:
            console.print(why_one, highlight=False, markup=False)
        today_seeds = runner.today()
        today = mean_figures(today_seeds)
        # unservable demand is kept apart from the cost of delay: no trial may add to it
        objectives = replace(objectives, max_unservable=today.unservable_workloads)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        if recorded_identity(out / STUDY_FILE) is None:
            create_study_file(out, lambda url: _new_study(url, identity, space, objectives, seed, out))
        study = _open_study(out, objectives, seed)
        distributions = space.distributions()
        ran = 0
        left_running = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.RUNNING]
        if left_running:  # an interrupted or killed run: the same trials again, with their own parameters
            console.print(f"resuming: {len(left_running)} trial(s) left running are replayed again", highlight=False)
            ran += runner.evaluate(study, space, objectives, [(t.number, t.params) for t in left_running])
        finished = sum(1 for t in study.get_trials(deepcopy=False) if t.state.is_finished())
        if finished and not left_running:
            console.print(f"resuming: {finished} trial(s) finished before", highlight=False)
        while finished < trials:
            size = min(batch, trials - finished)
            study.sampler = _sampler(seed, finished // batch, objectives)
            asked = []
            for _ in range(size):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the multivariate sampler's experimental warning
                    trial = study.ask(distributions)
                asked.append((trial.number, trial.params))
            ran += runner.evaluate(study, space, objectives, asked, progress=(finished, trials, quiet))
            finished += size
        collected = _collect(study, space, objectives)
        advice = Advice(out, today, today_seeds, collected, None, [], ran, 0.0)
        write_outputs(advice, space, inputs, console)
    advice.seconds = time.perf_counter() - began
    return advice


MAX_TRIALS = MAX_SCENARIOS  # as a sweep: a study is at most as many replays as a sweep's scenarios
_SEED_BITS = 63  # seeds are stored as 64-bit signed integers (the runs' seed column)


def _check_settings(trials: int, batch: int, workers: int | None, seed: int, replay_seed: int, seeds: int) -> None:
    """The counts and seeds, before anything is read or replayed: one line naming the flag."""
    for flag, value in (("--trials", trials), ("--batch", batch)):
        if not 1 <= value <= MAX_TRIALS:
            raise InputError(flag, f"must be between 1 and {MAX_TRIALS:,} (as many replays as a sweep), got {value:,}")
    if not 1 <= seeds <= MAX_SEEDS:
        raise InputError("--seeds", f"must be between 1 and {MAX_SEEDS}, got {seeds:,}")
    if trials * seeds > MAX_TRIALS:
        raise InputError("--seeds", f"--trials × --seeds is {trials * seeds:,} replays: at most {MAX_TRIALS:,} "
                         "(as many replays as a sweep)")
    if workers is not None and workers < 1:  # as `sweep --workers`: no pool of no processes
        raise InputError("--workers", f"must be >= 1, got {workers}")
    if not 0 <= seed < 2 ** _SEED_BITS:
        raise InputError("--seed", f"must be a whole number from 0 to 2^{_SEED_BITS}-1, got {seed}")
    if not -(2 ** _SEED_BITS) <= replay_seed <= 2 ** _SEED_BITS - seeds:  # its last seed is replay_seed + seeds - 1
        raise InputError("--replay-seed", f"must fit 64 bits with its {seeds} seed(s) "
                         f"(-2^{_SEED_BITS} to 2^{_SEED_BITS}-{seeds}), got {replay_seed}")


def _check_teams(objectives: Objectives, inputs: Inputs) -> None:
    """A team with targets must be a tenant of the trace: a misspelt one would silently hold
    (a team without workloads waits 0 h) or fail every trial (its share is 0). One line, as an
    unknown ClusterQueue in the same file."""
    if not objectives.teams:
        return
    from scheduler.commands import DEFAULT_START, parse_start
    from scheduler.trace.detect import load_trace

    loaded, _, _ = load_trace(inputs.trace, inputs.trace_format, parse_start(inputs.start) if inputs.start else None,
                              DEFAULT_START)
    tenants = sorted({w.tenant for w in loaded.workloads})
    for target in objectives.teams:
        if target.team not in tenants:
            known = ", ".join(tenants[:10]) + (", …" if len(tenants) > 10 else "")
            raise InputError(objectives.source, f"no workload of {inputs.trace.name} has tenant {target.team!r} "
                             f"(its tenants: {known or 'none'})", field=f"team.{target.team}")


# ---------------------------------------------------------------------------- the study


def _identity(inputs: Inputs, seed: int, batch: int) -> dict[str, Any]:
    """What a study's trials follow from: a folder holding a study of other ones is refused."""
    return {
        "version": _version(), "seed": seed, "batch": batch, "profile": inputs.profile,
        "replay_seed": inputs.replay_seed, "seeds": inputs.seeds, "start": inputs.start, "format": inputs.trace_format,
        "files": {role: sha256_file(p) for role, p in (("trace", inputs.trace), ("cluster", inputs.cluster),
                                                     ("queues", inputs.queues), ("prices", inputs.prices),
                                                     ("objectives", inputs.objectives)) if p is not None},
    }


def _new_study(url: str, identity: dict[str, Any], space: SearchSpace, objectives: Objectives, seed: int,
               out: Path) -> None:
    """A new study at ``url`` with its identity and its two principled first trials (the
    demand-proportional point, today's manifests within the bounds), closed again."""
    import optuna

    storage = optuna.storages.RDBStorage(url)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study = optuna.create_study(storage=storage, study_name=STUDY_NAME, directions=["minimize", "minimize"],
                                        sampler=_sampler(seed, 0, objectives))
        study.set_user_attr("identity", identity)
        start = space.demand_params(_demand(out / "state" / f"{TODAY}.demand.json"))
        if start is not None:
            study.enqueue_trial(start)
        current = space.today_params()  # today's manifests, within the bounds
        if current and current != start:
            study.enqueue_trial(current)
    finally:
        storage.remove_session()
        storage.engine.dispose()


def _open_study(out: Path, objectives: Objectives, seed: int) -> Any:
    import optuna

    storage = optuna.storages.RDBStorage(f"sqlite:///{out / STUDY_FILE}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optuna.load_study(storage=storage, study_name=STUDY_NAME, sampler=_sampler(seed, 0, objectives))


def _sampler(seed: int, batch_number: int, objectives: Objectives) -> Any:
    """A TPE sampler (multi-objective, multivariate, constrained) seeded for one batch: the
    batch's trials follow from the seed, the batch number and the finished trials alone."""
    import numpy as np
    import optuna

    derived = int(np.random.SeedSequence([seed, batch_number]).generate_state(1)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optuna.samplers.TPESampler(seed=derived, multivariate=True, n_startup_trials=STARTUP_TRIALS,
                                          constraints_func=_constraints if objectives.teams else None)


def _constraints(trial: Any) -> list[float]:
    return list(trial.user_attrs.get("violations", []))


def _collect(study: Any, space: SearchSpace, objectives: Objectives) -> list[Trial]:
    trials = []
    for frozen in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
        figures = frozen.user_attrs.get("figures")
        trials.append(Trial(frozen.number, dict(frozen.params), space.point(frozen.params),
                            RunFigures.from_dict(figures) if figures else None,
                            [RunFigures.from_dict(f) for f in frozen.user_attrs.get("seed_figures", [])],
                            list(frozen.user_attrs.get("violations", [])), frozen.state.name,
                            str(frozen.user_attrs.get("error", ""))))
    return trials


def _demand(path: Path) -> dict[tuple[str, str], float]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {(r["cluster_queue"], r["gpu_model"]): float(r["gpu_hours"]) for r in rows}


# --------------------------------------------------------------------------- the replays


class _Runner:
    """Replays manifests with the sweep's executors and reads each run's figures."""

    def __init__(self, inputs: Inputs, out: Path, executor: str, address: str | None, workers: int | None,
                 console: Console) -> None:
        self.inputs, self.out, self.console = inputs, out, console
        self.ray = RayExecutor(address or "auto", lambda task, files: deliver_run(task.run_dir, files)) \
            if executor == "ray" else None
        if self.ray is not None:
            self.ray.check()
        self.workers = workers or os.cpu_count() or 1
        self.timeout_s: float | None = DEFAULT_TIMEOUT_S
        # trials told in this process and since when: the time left, from the pace so far
        self.told, self.began = 0, time.monotonic()
        for folder in ("runs", "state", "trials"):
            (out / folder).mkdir(parents=True, exist_ok=True)

    def tasks(self, name: str, queues: Path) -> list[ScenarioTask]:
        """One replay of ``queues`` per replay seed, in seed order (`gpu_finops.advise.seeds`)."""
        inputs = self.inputs
        tasks = []
        for k, seed in enumerate(replay_seeds(inputs.replay_seed, inputs.seeds)):
            run = seed_run_name(name, k, seed)
            tasks.append(ScenarioTask(name=run, run_id=f"advise-{run}", trace=inputs.trace, cluster=inputs.cluster,
                                      queues=queues, profile=inputs.profile, seed=seed, start=inputs.start,
                                      trace_format=inputs.trace_format, run_dir=self.out / "runs" / run,
                                      timeout_s=self.timeout_s))
        return tasks

    def run(self, tasks: list[ScenarioTask], on_done: Any) -> None:
        def started(task: ScenarioTask, where: str) -> None:
            del task, where

        if self.ray is not None:
            self.ray.run(tasks, started, on_done)
        else:
            LocalExecutor(self.workers).run(tasks, started, on_done)

    def figures(self, task: ScenarioTask) -> RunFigures:
        """Build the models the figures read, in memory, and read them: the same figures as a
        full build of the run (`pipeline.partial`), at about half its cost and with no file."""
        from pipeline.partial import build_models

        tables = (*FIGURE_TABLES, "stg_workloads") if task.name == TODAY else FIGURE_TABLES  # first seed's demand
        try:
            con = build_models([task.run_dir], self.inputs.prices, tables)
            try:
                figures = figures_of(con, task.run_id)
                demand = _queue_demand(con, task.run_id) if task.name == TODAY else None
            finally:
                con.close()
        except Exception as failure:
            raise_query_interrupt(failure)  # the user's Ctrl-C (or SIGTERM), not a failed build
            raise
        if demand is not None:
            _write_state(self.out, f"{TODAY}.demand.json", demand)
        return figures

    def today(self) -> list[RunFigures]:
        """Today's manifests replayed under every seed: their figures, in seed order."""
        tasks = self.tasks(TODAY, self.inputs.queues)
        state = self.out / "state" / f"{TODAY}.json"
        fingerprint = {"queues": sha256_file(self.inputs.queues), "trace": sha256_file(self.inputs.trace),
                       "cluster": sha256_file(self.inputs.cluster), "prices": sha256_file(self.inputs.prices),
                       "profile": self.inputs.profile, "seeds": [task.seed for task in tasks], "version": _version()}
        previous = read_json_object(state)
        if previous.get("fingerprint") == fingerprint and all((t.run_dir / "run.json").is_file() for t in tasks):
            return [RunFigures.from_dict(f) for f in previous["seed_figures"]]
        self.console.print(f"replaying today's manifests ({len(tasks)} seed{'s' if len(tasks) > 1 else ''}) …",
                           highlight=False)
        outcomes: dict[str, Outcome] = {}
        self.run(tasks, lambda outcome: outcomes.__setitem__(outcome.task.name, outcome))
        for task in tasks:
            outcome = outcomes.get(task.name)
            if outcome is None or not outcome.ok:
                raise InputError(self.inputs.queues, f"the replay of today's manifests (seed {task.seed}) failed: "
                                 f"{outcome.error if outcome else 'no answer'}")
        figures = [self.figures(task) for task in tasks]
        _write_state(self.out, f"{TODAY}.json", {"fingerprint": fingerprint,
                                                 "seed_figures": [f.as_dict() for f in figures]})
        return figures

    def evaluate(self, study: Any, space: SearchSpace, objectives: Objectives, asked: list[tuple[int, dict[str, Any]]],
                 progress: tuple[int, int, bool] | None = None) -> int:
        """Replay the asked trials, then tell the study in trial order."""
        import optuna

        tasks: dict[str, tuple[int, int, ScenarioTask]] = {}  # run name: trial, seed's place, task
        for number, params in asked:
            folder = self.out / "trials" / f"trial-{number:04d}"
            # through the folder's list of files: a file of the user's there is refused, not replaced
            queues, = write_files(folder, {"queues.yaml": space.text(space.point(params),
                                                                     f"# advise quotas: trial {number}\n")})
            for k, task in enumerate(self.tasks(f"trial-{number:04d}", queues)):
                tasks[task.name] = (number, k, task)
        seeds = self.inputs.seeds
        per_seed: dict[int, dict[int, RunFigures]] = {number: {} for number, _ in asked}
        errors: dict[int, str] = {}  # a trial's first failed seed fails it
        answered = dict.fromkeys(per_seed, 0)
        results: dict[int, RunFigures | None] = {}  # a trial's mean once every seed has answered

        def done(outcome: Outcome) -> None:
            number, k, task = tasks[outcome.task.name]
            if not outcome.ok:
                errors.setdefault(number, outcome.error)
            else:
                try:
                    per_seed[number][k] = self.figures(task)
                except Exception as failure:  # a build that fails fails this trial only (an interrupt is not one)
                    errors.setdefault(number, f"{type(failure).__name__}: {failure}")
            answered[number] += 1
            if answered[number] < seeds:  # the trial is told once every seed has answered
                return
            figures = None if number in errors else mean_figures([per_seed[number][i] for i in range(seeds)])
            results[number] = figures
            self.told += 1
            if progress is not None and not progress[2]:
                told = f"idle ${figures.idle_cost:,.0f}, delay ${figures.cost_of_delay:,.0f}" if figures else \
                    f"[red]failed[/]: {errors[number]}"
                finished = len(results) + progress[0]
                self.console.print(f"trial {number} ({finished}/{progress[1]}): {told}"
                                   f"{time_left(time.monotonic() - self.began, self.told, progress[1] - finished)}",
                                   highlight=False)

        self.run([task for _, _, task in tasks.values()], done)
        for number, _ in sorted(asked):
            figures = results.get(number)
            if figures is None:
                error = errors.get(number, "no answer from the executor")
                study._storage.set_trial_user_attr(_trial_id(study, number), "error", error[:500])
                study.tell(number, state=optuna.trial.TrialState.FAIL)
                continue
            trial_id = _trial_id(study, number)
            study._storage.set_trial_user_attr(trial_id, "figures", figures.as_dict())
            study._storage.set_trial_user_attr(trial_id, "seed_figures",
                                               [per_seed[number][k].as_dict() for k in range(seeds)])
            study._storage.set_trial_user_attr(trial_id, "violations", violations(objectives, figures))
            study.tell(number, [figures.idle_cost, figures.cost_of_delay])
        return len(asked)


def _write_state(out: Path, name: str, value: Any) -> None:
    write_files(out / "state", {name: json.dumps(value, indent=2, default=str) + "\n"})


def time_left(elapsed_s: float, done: int, left: int) -> str:
    """" · about 12 min left" at the pace of the trials done so far ("" when none is left)."""
    if left <= 0 or done <= 0:
        return ""
    seconds = elapsed_s / done * left
    return f" · about {seconds / 60:,.0f} min left" if seconds >= 90 else f" · about {seconds:,.0f} s left"


def _trial_id(study: Any, number: int) -> int:
    return int(study._storage.get_trial_id_from_study_id_trial_number(study._study_id, number))


def _queue_demand(con: Any, run_id: str) -> list[dict[str, Any]]:
    """GPU-hours each ClusterQueue's workloads asked of each GPU model (a workload that accepts
    several models counts an equal share for each; one that names none is model ``*``)."""
    rows = con.execute("""
        SELECT w.cluster_queue, m.gpu_model, sum(m.gpu_hours)
        FROM fct_workloads w JOIN stg_workloads s USING (run_id, workload_id),
             LATERAL (SELECT unnest(string_split(coalesce(s.gpu_model, '*'), '|')) AS gpu_model,
                      s.pods * s.gpus_per_pod * s.duration_s / 3600
                      / len(string_split(coalesce(s.gpu_model, '*'), '|')) AS gpu_hours) m
        WHERE w.run_id = ? AND w.cluster_queue IS NOT NULL
        GROUP BY ALL ORDER BY ALL
    """, [run_id]).fetchall()
    return [{"cluster_queue": cq, "gpu_model": model, "gpu_hours": round(float(hours), 2)} for cq, model, hours in rows]


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("gpu-finops")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


