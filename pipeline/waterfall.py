"""The idle waterfall's steps as SQL, from the registry (pipeline/registry.py WATERFALL).

int_idle_by_cause.sql holds everything a step reads: `after_0` (every GPU model at every step
of the run's grid, with `free_0`, the usable free GPUs the gang barrier left), `level_members`
(each waiting level on each model of its set, with its wait kind and minimum shape) and
`fit_keyed` (int_shape_fit), and `model_capacity` (a model's names by its key). The steps join, group and partition on integer keys numbered there:
mkey a run's GPU model, lkey a run's waiting set (wait kind, models, minimum shape), fkey a
run's GPU model × pod size (a fit's); with the step (a run's grid point, numbered in time order)
they stand for the text and double columns they number, so every row is the same. Each step is
the same block: the models' steps with GPUs left that a level of its waits is on (numbered by
`ord`), the fit in force at each of them for each fit timeline its waits ask for (one as-of
lookup per timeline and step, `w{n}_fit`), the levels' members there (hash-joined to that
lookup), the registry's fit test (a macro of models/macros.sql) for what each member could have
used, and the claim: per waiting set, what its members could use, scaled to its GPUs where they
could use more (its demand counts once across its models), never more than the GPUs left. A
level on one model has one member a step and skips the window over (level, step); `used_n`
skips the hash aggregate for groups of one row (`plain=True` renders the twin without these
shortcuts, tests/pipeline/test_waterfall_fast_paths.py). A step whose waits earlier steps claim
for (what a level still asks is its GPUs less what they gave it) runs the fit test first, which
does not read what is still asked, and sums the earlier claims only for the (level, step)s with
a member that could use something (`w{n}_asks`, `w{n}_used_k`); the plain rendering joins every
member to `used_{n-1}`, every level at every step. A step whose waits no earlier step claims
for goes by runs instead of steps (`_run_step`): a member wants the same at every step of a run
where its model's GPUs left (`w{n}_free`: stretches) and its fit (`fit_steps`: the fit's
changes by grid step) are unchanged (`w{n}_pieces`, `w{n}_runs`), and a level on several models
at every step of a segment where none of its members' runs starts or ends (`w{n}_bounds`); the
model's pull is a running sum of exact decimal changes where runs start and end, the xsum of
the rows in force at each step bit for bit, and a later step reads a run's want at an asked
step by an as-of lookup. The block ends in `waterfall_claims`: run_id, gpu_model, step,
idle_reason, gpus (one row per claim step and model step).
"""

from __future__ import annotations

from pipeline.registry import WATERFALL, Claim

MARKER = "-- @waterfall (pipeline/waterfall.py)"

# a waiting level at a step: one set of GPU models, one minimum shape, one wait kind (lkey)
_LEVEL = "lkey, step"



def _members(n: int, which: str, negate: str, waits: str, still_asked: str, used_join: str) -> str:
    """Each level on each model where GPUs are left, at each of its steps, with the fit of its size
    (levels of one model, or of several: `which`)."""
    return f"""
w{n}_members_{which} as (
    -- each level ({which} model{'' if which == 'one' else 's'}) on each model where GPUs are left,
    -- at each of its steps, with the fit of its size
    select l.lkey, l.mkey, l.gpus_per_pod, l.min_pods, {still_asked} as gpus,
        f.step, f.free, f.fit_pods, f.unfit_free_gpus, f.all_free_gpus
    from (
        select l.lkey, l.mkey, coalesce(l.fkey, -l.mkey) as sk, l.gpus_per_pod, l.min_pods, l.gpus,
            unnest(range(b.ord - cast(b.free > 0 as bigint) + 1, e.ord + 1)) as ord
        from level_members as l
        inner join w{n}_sets as k on k.lkey = l.lkey and {negate}k.one_model
        inner join w{n}_free as b on b.mkey = l.mkey and b.step = l.step
        inner join w{n}_free as e on e.mkey = l.mkey and e.step = l.next_step - 1
        where l.wait in ({waits})
    ) as l
    inner join w{n}_fit as f using (sk, ord){used_join}
    where {still_asked} > 1e-9
),
"""

def _shapes(n: int, waits: str) -> str:
    return f"""w{n}_shapes as (
    -- the fit timelines these waits ask for: sk is a model × pod size (fkey), or the model alone
    -- (−mkey) for a size with no timeline there (no fit: zeros, as for no row in force)
    select distinct mkey, fkey, coalesce(fkey, -mkey) as sk
    from level_members
    where wait in ({waits})
),
"""


def _sets(n: int, waits: str, plain: bool) -> str:
    return f"""w{n}_sets as (
    -- the models of each waiting set that have GPUs: a level on one model is its own partition
    select lkey, {'false' if plain else 'count(distinct mkey) = 1'} as one_model
    from level_members
    where wait in ({waits})
    group by lkey
),
"""


def _step(n: int, claim: Claim, plain: bool) -> str:
    waits = ", ".join(f"'{wait}'" for wait in claim.waits)
    before = f"free_{n - 1}"
    if _by_runs(n, claim, plain):
        return _run_step(n, claim, waits, before)
    # what each level still asks for: its GPUs less what the steps before claimed for it there
    asked_later = not plain and n > 1 and _shares_waits(n, claim)
    if n == 1 or (not plain and not _shares_waits(n, claim)) or asked_later:
        # (used_{n-1} holds only other waits' levels: nothing to subtract; or asked_later: it is
        # subtracted after the fit test, in _wanted_asked_later)
        still_asked, used_join = "l.gpus", ""
    else:
        still_asked = "l.gpus - coalesce(u.gpus, 0)"
        used_join = f"\n        left join used_{n - 1} as u on u.lkey = l.lkey and u.step = f.step"
    return f"""
w{n}_free as (
    -- {claim.cause} ({', '.join(claim.waits)}): every step of a model; ord counts its steps with GPUs left
    select mkey, step, time_s, {before} as free,
        cast(sum(cast({before} > 0 as integer)) over (
            partition by mkey order by step rows between unbounded preceding and current row
        ) as bigint) as ord
    from after_{n - 1} as f
    where exists (select 1 from level_members as l where l.wait in ({waits}) and l.mkey = f.mkey)
),

{_shapes(n, waits)}
w{n}_fit as (
    -- each step of a model with GPUs left (by ord), for each timeline these waits ask for, with
    -- the fit in force there (every change of it is a point of the grid): one lookup per
    -- timeline and step, hash-joined by the levels' members, never an as-of join per member
    select s.sk, f.ord, f.step, f.free, coalesce(q.fit_pods, 0) as fit_pods,
        coalesce(q.unfit_free_gpus, 0) as unfit_free_gpus, coalesce(q.free_gpus, 0) as all_free_gpus
    from w{n}_free as f
    inner join w{n}_shapes as s using (mkey)
    asof left join (
        select * from fit_keyed where fkey in (select fkey from w{n}_shapes)
    ) as q on q.fkey = s.fkey and q.start_s <= f.time_s
    where f.free > 0
),

{_sets(n, waits, plain)}{_members(n, "one", "", waits, still_asked, used_join)}{_members(n, "many", "not ", waits, still_asked, used_join)}
{_wanted_asked_later(n, claim) if asked_later else _wanted(n, claim, plain)}w{n}_pull as (
    select mkey, step, xsum(wanted) as wanted
    from (
        select mkey, step, wanted from w{n}_wanted_many
        union all
        select mkey, step, wanted from w{n}_wanted_one
    )
    group by all
),

after_{n} as (
    -- never more than the GPUs left; pulled_{n}: what the waits wanted there (only what the next
    -- step and the claims read: materialized, each step's rows are all of a model's steps)
    select f.mkey, f.step, f.time_s, least(f.{before}, coalesce(p.wanted, 0)) as claim_{n},
        f.{before} - least(f.{before}, coalesce(p.wanted, 0)) as free_{n},
        coalesce(p.wanted, 0) as pulled_{n}
    from after_{n - 1} as f
    left join w{n}_pull as p using (mkey, step)
),
{_used(n, claim, plain) if plain else ''}"""


def _by_runs(n: int, claim: Claim, plain: bool) -> bool:
    """Step n runs by runs of unchanged state: a member's want is the same at every step of a run
    where its model's GPUs left and its fit are unchanged (and, on several models, its level's
    other members' too). Not where what a level still asks changes within a run (earlier steps
    claim for the same waits), nor in the plain rendering."""
    return not plain and not _shares_waits(n, claim)


# Each change of the fit of a timeline the levels ask for (a row equal to the one before it
# changes nothing), with the first step of the run's grid it is in force at: the step at its
# start (int_shape_fit changes where model_changes does, at the pod intervals and slack of the
# model's nodes, and at time 0: all points of the grid), else the first step after its start.
_FIT_STEPS = """
fit_changes as (
    select * from fit_keyed
    where fkey in (select fkey from level_members)
    qualify (fit_pods, unfit_free_gpus, free_gpus)
        is distinct from lag((fit_pods, unfit_free_gpus, free_gpus)) over (partition by fkey order by start_s)
),

fit_steps as (
    select q.fkey, q.start_s, g.step as first_step, q.fit_pods, q.unfit_free_gpus, q.free_gpus
    from fit_changes as q
    inner join grid_steps as g on g.run_id = q.run_id and g.time_s = q.start_s
    union all
    select q.fkey, q.start_s, g.step, q.fit_pods, q.unfit_free_gpus, q.free_gpus
    from (
        select * from fit_changes as q
        where not exists (select 1 from grid_steps as g where g.run_id = q.run_id and g.time_s = q.start_s)
    ) as q
    asof inner join grid_steps as g on g.run_id = q.run_id and q.start_s <= g.time_s
),
"""


def _run_step(n: int, claim: Claim, waits: str, before: str) -> str:
    """Step n by runs: each level's members over the runs of unchanged state inside it (a level
    on several models: over the segments where none of its members' runs starts or ends), the
    fit test and the claim on those rows, and the model's pull as a running sum of exact changes
    where runs start and end (the xsum of the members in force at each step, bit for bit)."""
    return f"""
w{n}_free as (
    -- {claim.cause} ({', '.join(claim.waits)}): each stretch of a model's steps with the same GPUs
    -- left (none left too)
    select mkey, step as first_step, last_step, free
    from (
        select *, case when ends then step else lead(step) over (partition by mkey order by step) end as last_step
        from (
            select mkey, step, {before} as free,
                {before} is distinct from lag({before}) over w as starts,
                {before} is distinct from lead({before}) over w as ends
            from after_{n - 1} as f
            where exists (select 1 from level_members as l where l.wait in ({waits}) and l.mkey = f.mkey)
            window w as (partition by mkey order by step)
        )
        where starts or ends
    )
    where starts
),

{_shapes(n, waits)}
w{n}_pieces as (
    -- the runs of unchanged state (GPUs left, fit in force) along each timeline these waits ask
    -- for: a stretch of its model's GPUs left or a fit row starts one; numbered along the
    -- timeline (pidx: every start, kept or not), those with GPUs left kept
    select * from (
        select sk, step as first_step,
            coalesce(lead(step) over w - 1, last_value(stretch_last_step ignore nulls) over w) as last_step,
            row_number() over w as pidx,
            last_value(free ignore nulls) over w as free,
            coalesce(last_value(fit_pods ignore nulls) over w, 0) as fit_pods,
            coalesce(last_value(unfit_free_gpus ignore nulls) over w, 0) as unfit_free_gpus,
            coalesce(last_value(free_gpus ignore nulls) over w, 0) as all_free_gpus
        from (
            select s.sk, r.first_step as step, r.last_step as stretch_last_step, r.free,
                null as fit_pods, null as unfit_free_gpus, null as free_gpus, null as start_s
            from w{n}_free as r
            inner join w{n}_shapes as s using (mkey)
            union all
            select s.sk, f.first_step, null, null, f.fit_pods, f.unfit_free_gpus, f.free_gpus, f.start_s
            from fit_steps as f
            inner join w{n}_shapes as s using (fkey)
        )
        -- of a stretch and fit rows starting at one step, the last row holds the latest of each
        window w as (partition by sk order by step, start_s nulls first rows between unbounded preceding and current row)
    )
    where free > 0 and first_step <= last_step
),

{_sets(n, waits, plain=False)}
w{n}_runs as materialized (
    -- each level on each model, over each run of its timeline inside the level's steps
    select l.lkey, l.mkey, l.one_model, l.gpus_per_pod, l.min_pods, l.gpus,
        greatest(p.first_step, l.step) as step, least(p.last_step, l.last_step) as last_step,
        p.free, p.fit_pods, p.unfit_free_gpus, p.all_free_gpus
    from (
        select l.*, unnest(range(a.pidx, b.pidx + 1)) as pidx
        from (
            select l.lkey, l.mkey, k.one_model, coalesce(l.fkey, -l.mkey) as sk, l.gpus_per_pod, l.min_pods,
                l.gpus, l.step, l.next_step - 1 as last_step
            from level_members as l
            inner join w{n}_sets as k using (lkey)
            where l.wait in ({waits}) and l.gpus > 1e-9
        ) as l
        -- the first run that ends inside the level, to the last that starts inside it
        asof inner join w{n}_pieces as a on a.sk = l.sk and l.step <= a.last_step
        asof inner join w{n}_pieces as b on b.sk = l.sk and l.last_step >= b.first_step
    ) as l
    inner join w{n}_pieces as p using (sk, pidx)
),

w{n}_members_one as (
    select * from w{n}_runs where one_model
),

w{n}_bounds as (
    -- where a run of a member of a level on several models starts or has ended: between two
    -- (a segment, numbered along the level: sidx) no member's state changes
    select lkey, step, row_number() over w as sidx, lead(step) over w - 1 as last_step
    from (
        select distinct lkey, step from (
            select lkey, step from w{n}_runs where not one_model
            union all
            select lkey, last_step + 1 from w{n}_runs where not one_model
        )
    )
    window w as (partition by lkey order by step)
),

w{n}_members_many as (
    -- each member of a level on several models at each segment its run covers
    select r.lkey, r.mkey, r.gpus_per_pod, r.min_pods, r.gpus, g.step, g.last_step,
        r.free, r.fit_pods, r.unfit_free_gpus, r.all_free_gpus
    from (
        select r.*, unnest(range(s.sidx, e.sidx)) as sidx
        from w{n}_runs as r
        inner join w{n}_bounds as s on s.lkey = r.lkey and s.step = r.step
        inner join w{n}_bounds as e on e.lkey = r.lkey and e.step = r.last_step + 1
        where not r.one_model
    ) as r
    inner join w{n}_bounds as g on g.lkey = r.lkey and g.sidx = r.sidx
),
{_wanted(n, claim, plain=False, span=", last_step")}w{n}_pull as (
    -- what the waits want at each step of a model: the exact sum of the rows in force there, a
    -- running sum of exact changes where runs start and end, at each step where it is not 0
    select mkey, unnest(range(step, next_step)) as step, wanted
    from (
        select mkey, step, lead(step) over w as next_step,
            cast(sum(change) over (w rows between unbounded preceding and current row) as double) as wanted
        from (
            select mkey, step, sum(change) as change
            from (
                select mkey, step, cast(wanted as decimal(38, 18)) as change from w{n}_wanted_many
                union all
                select mkey, last_step + 1, -cast(wanted as decimal(38, 18)) from w{n}_wanted_many
                union all
                select mkey, step, cast(wanted as decimal(38, 18)) from w{n}_wanted_one
                union all
                select mkey, last_step + 1, -cast(wanted as decimal(38, 18)) from w{n}_wanted_one
            )
            group by all
        )
        window w as (partition by mkey order by step)
    )
    where wanted <> 0
),

after_{n} as (
    -- never more than the GPUs left; pulled_{n}: what the waits wanted there
    select f.mkey, f.step, f.time_s, least(f.{before}, coalesce(p.wanted, 0)) as claim_{n},
        f.{before} - least(f.{before}, coalesce(p.wanted, 0)) as free_{n},
        coalesce(p.wanted, 0) as pulled_{n}
    from after_{n - 1} as f
    left join w{n}_pull as p using (mkey, step)
),
"""


def _usable(n: int, claim: Claim, which: str) -> str:
    """The fit test on step n's members: what each could use (`usable`). A level on several
    models (`many`) asks whether its gang fits packed on any of them; on one model (`one`),
    on that one."""
    packed = "fits_packed_somewhere" if which == "many" else "min_pods * gpus_per_pod <= all_free_gpus + 1e-9"
    members = f"w{n}_members_{which}"
    if which == "many":
        members = f"""(
            select *, bool_or(min_pods * gpus_per_pod <= all_free_gpus + 1e-9) over (partition by {_LEVEL})
                as fits_packed_somewhere
            from w{n}_members_many
        )"""
    return f"""select *, {claim.fit_test}(free, fit_pods, unfit_free_gpus, all_free_gpus, gpus_per_pod, min_pods,
            {packed}) as usable
        from {members}"""


def _wanted(n: int, claim: Claim, plain: bool, span: str = "") -> str:
    """What each member wants: the fit test, then at most its level's GPUs still asked over its
    models (the members hold what is still asked). `span`: the run's last step, for a step by
    runs (a member's row then stands for every step of its run)."""
    return f"""
w{n}_wanted_many as materialized (
    -- the fit test: what each member could use; a level wants at most its GPUs over its models
    -- (a level on several models: sums over its members at each step)
    select lkey, mkey, step{span}, usable * least(1, gpus / xsum(usable) over (partition by {_LEVEL})) as wanted
    from (
        {_usable(n, claim, "many")}
    )
    {"" if plain else "-- a member that could use nothing wants nothing: it adds 0 to every sum below"}
    {"" if plain else "where usable <> 0"}
    qualify xsum(usable) over (partition by {_LEVEL}) > 0
),

w{n}_wanted_one as materialized (
    -- the same for a level on one model: one member a step, so the sums of one row without the
    -- window's sort (xsum of one value: the value as a decimal(38, 18))
    select lkey, mkey, step{span}, usable * least(1, gpus / {_one("usable")}) as wanted
    from (
        {_usable(n, claim, "one")}
    )
    where {_one("usable")} > 0
),

"""


def _wanted_asked_later(n: int, claim: Claim) -> str:
    """What each member wants where earlier steps claim for the same waits: the fit test first
    (it does not read what a level still asks), then what the earlier steps gave, summed only
    for the (level, step)s with a member that could use something (`w{n}_asks`), subtracted.
    What is still asked is the level's at the step, so its filter keeps or drops all members of
    a (level, step): the window over them sees the rows the plain rendering's does."""
    chain = "".join(_used(k, WATERFALL[k - 1], plain=False, prefix=f"w{n}_", asks=f"w{n}_asks")
                    for k in range(1, n))
    still_asked = f"""select t.* replace (t.gpus - coalesce(u.gpus, 0) as gpus)
        from w{n}_tested_{{which}} as t
        left join w{n}_used_{n - 1} as u on u.lkey = t.lkey and u.step = t.step"""
    return f"""
w{n}_tested_many as materialized (
    -- the fit test on levels on several models: the members that could use something
    select * from (
        {_usable(n, claim, "many")}
    )
    where usable <> 0
),

w{n}_tested_one as materialized (
    select * from (
        {_usable(n, claim, "one")}
    )
    where usable <> 0
),

w{n}_asks as (
    -- the (level, step)s whose earlier claims are read
    select distinct lkey, step from (
        select lkey, step from w{n}_tested_many
        union all
        select lkey, step from w{n}_tested_one
    )
),
{chain}
w{n}_wanted_many as materialized (
    -- a level wants at most its GPUs still asked over its models
    select lkey, mkey, step, usable * least(1, gpus / xsum(usable) over (partition by {_LEVEL})) as wanted
    from ({still_asked.format(which="many")})
    where gpus > 1e-9
    qualify xsum(usable) over (partition by {_LEVEL}) > 0
),

w{n}_wanted_one as materialized (
    select lkey, mkey, step, usable * least(1, gpus / {_one("usable")}) as wanted
    from ({still_asked.format(which="one")})
    where gpus > 1e-9 and {_one("usable")} > 0
),
"""


def _given(n: int, which: str, asks: str | None = None) -> str:
    # what a member is given at its step: its part of the model's claim (a model short of GPUs
    # gives each its part); `asks`: only for these (level, step)s
    if asks and _by_runs(n, WATERFALL[n - 1], plain=False):
        # a step by runs holds a member's want once per run: the run in force at each asked step
        return f"""select q.lkey, q.step, w.wanted * a.claim_{n} / a.pulled_{n} as gpus
        from (
            select q.lkey, q.step, m.mkey
            from {asks} as q
            inner join (select distinct lkey, mkey from w{n}_wanted_{which}) as m using (lkey)
        ) as q
        asof inner join w{n}_wanted_{which} as w on w.lkey = q.lkey and w.mkey = q.mkey and q.step >= w.step
        inner join after_{n} as a on a.mkey = q.mkey and a.step = q.step
        where q.step <= w.last_step and a.pulled_{n} > 0"""
    only = (f"\n        semi join {asks} as q on q.lkey = w.lkey and q.step = w.step" if asks else "")
    return f"""select w.lkey, w.step, w.wanted * a.claim_{n} / a.pulled_{n} as gpus
        from w{n}_wanted_{which} as w{only}
        inner join after_{n} as a on a.mkey = w.mkey and a.step = w.step
        where a.pulled_{n} > 0"""


def _used(n: int, claim: Claim, plain: bool, prefix: str = "", asks: str | None = None) -> str:
    """{prefix}used_n: what each level has been given by the steps up to n at each step (only at
    the (level, step)s of `asks` if given)."""
    name, earlier_name = f"{prefix}used_{n}", f"{prefix}used_{n - 1}"
    if plain or _shares_waits(n, claim):
        return f"""
{name} as (
    -- what each level has been given so far at each step
    select {_LEVEL}, xsum(gpus) as gpus
    from (
        {f"select * from {earlier_name} union all" if n > 1 else ""}
        {_given(n, "many", asks)}
        union all
        {_given(n, "one", asks)}
    )
    group by all
),
"""
    # No earlier step claims for these waits: a level's rows are all earlier ones or all of this
    # step, and a level on one model has one row a step. Those groups are of one row: xsum of it
    # without the hash aggregate.
    earlier = (f"select lkey, step, {_one('gpus')} as gpus from {earlier_name}\n    union all\n    "
               if n > 1 else "")
    return f"""
{name} as (
    -- what each level has been given so far at each step
    {earlier}select lkey, step, {_one('gpus')} as gpus from ({_given(n, "one", asks)})
    union all
    select {_LEVEL}, xsum(gpus) as gpus from ({_given(n, "many", asks)})
    group by all
),
"""


def _one(value: str) -> str:
    """xsum over a group of one row: the value as a decimal(38, 18), as a double again."""
    return f"cast(cast({value} as decimal(38, 18)) as double)"


def _shares_waits(n: int, claim: Claim) -> bool:
    """Some step before the n-th (1-based) claims for a wait kind of this one."""
    return any(set(claim.waits) & set(earlier.waits) for earlier in WATERFALL[: n - 1])


def waterfall_ctes(plain: bool = False) -> str:
    """The CTEs of every step of the waterfall, then `waterfall_claims`. ``plain``: without the
    shortcuts for groups of one row (levels on one model, steps whose waits no earlier step
    claims for), every level through the window and every `used` through the hash aggregate:
    the twin the tests compare the fast rendering with (the same rows)."""
    steps = "".join(_step(n, claim, plain) for n, claim in enumerate(WATERFALL, 1))
    if any(_by_runs(n, claim, plain) for n, claim in enumerate(WATERFALL, 1)):
        steps = _FIT_STEPS + steps
    claims = "\n        union all\n".join(
        f"        select mkey, step, '{claim.cause}' as idle_reason, claim_{n} as gpus from after_{n}"
        for n, claim in enumerate(WATERFALL, 1)
    )
    return (f"{steps}\nwaterfall_claims as (\n    select m.run_id, m.gpu_model, c.step, c.idle_reason, c.gpus\n"
            f"    from (\n{claims}\n    ) as c\n    inner join model_capacity as m using (mkey)\n),\n")


def render(sql: str, plain: bool = False) -> str:
    """A model's SQL with the waterfall's CTEs in place of its marker line (if it has one)."""
    return sql.replace(MARKER, waterfall_ctes(plain)) if MARKER in sql else sql
