-- Temporary macros shared by the models; created on every build connection (never stored).

-- Simulated seconds since the run start -> TIMESTAMP (UTC), rounded to the microsecond.
create or replace temp macro ts_at(start_ts, seconds) as
    start_ts + to_microseconds(cast(round(seconds * 1000000) as bigint));

-- Same arithmetic as scheduler.eventlog.schema.last_checkpoint_s, including Python's float
-- floor division ((a - fmod(a, b)) / b, rounded to the nearest whole number when the division
-- lands within 0.5 of the next one), so both sides agree bit for bit.
create or replace temp macro floordiv_py(a, b) as
    case
        when ((a - fmod(a, b)) / b) - floor((a - fmod(a, b)) / b) > 0.5
            then floor((a - fmod(a, b)) / b) + 1
        else floor((a - fmod(a, b)) / b)
    end;

create or replace temp macro last_checkpoint_s(progress_start_s, end_s, checkpoint_interval_s) as
    case
        when checkpoint_interval_s is null
            or checkpoint_interval_s <= 0
            or end_s <= progress_start_s
            then progress_start_s
        else progress_start_s
            + floordiv_py(end_s - progress_start_s, checkpoint_interval_s) * checkpoint_interval_s
    end;
