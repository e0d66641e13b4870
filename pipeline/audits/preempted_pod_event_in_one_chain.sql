-- every preempted pod event belongs to exactly one preemption chain, one level below the event
-- it follows (in that event's chain, under the same origin preemptor), or starts one at depth 1
with events as (
    select run_id, seq
    from stg_events
    where event = 'preempted' and pod_index is not null
),

cascades as (
    select * from fct_preemption_cascades
),

per_event as (
    select run_id, event_seq as seq, count(*) as chain_rows, count(distinct chain_id) as chains
    from cascades
    group by all
),

placed_twice_or_never as (
    select
        coalesce(e.run_id, c.run_id) as run_id,
        coalesce(e.seq, c.seq) as event_seq,
        coalesce(c.chain_rows, 0) as chain_rows,
        'in ' || coalesce(c.chain_rows, 0) || ' chain rows'
            || case when e.seq is null then ', not a preempted pod event' else '' end as problem
    from events as e
    full outer join per_event as c on c.run_id = e.run_id and c.seq = e.seq
    where e.seq is null or c.seq is null or c.chain_rows <> 1 or c.chains <> 1
),

misplaced as (
    select c.run_id, c.event_seq, 1 as chain_rows,
        case
            when c.parent_seq is null and c.depth <> 1 then 'a chain start below depth 1'
            when p.event_seq is null then 'follows no preempted pod event'
            else 'not one level below the event it follows, in its chain'
        end as problem
    from cascades as c
    left join cascades as p on p.run_id = c.run_id and p.event_seq = c.parent_seq
    where (c.parent_seq is null and c.depth <> 1)
        or (c.parent_seq is not null and (
            p.event_seq is null
            or p.chain_id is distinct from c.chain_id
            or p.depth + 1 <> c.depth
            or p.root_workload_id is distinct from c.root_workload_id))
),

final as (
    select * from placed_twice_or_never
    union all
    select * from misplaced
)

select * from final
