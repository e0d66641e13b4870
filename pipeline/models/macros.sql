-- Temporary macros shared by the models; created on every build connection (never stored).

-- Exact sums (docs/performance.md, "Build"). Each value is rounded once to a fixed point of
-- 10⁻¹⁸ (DECIMAL(38, 18): a 128-bit integer, up to 10²⁰ in magnitude) and the integers are
-- added, so a sum is the same whatever order its rows arrive in: on any number of threads,
-- after any join. A sum of doubles is not (floating-point addition is not associative), which
-- kept the build on one thread. The result is the exact sum rounded once to a double. Sums of
-- integers (pods, counts, whole GPUs) stay plain `sum`.
create or replace temp macro xsum(x) as cast(sum(cast(x as decimal(38, 18))) as double);
create or replace temp macro xavg(x) as cast(avg(cast(x as decimal(38, 18))) as double);
-- xsum of a group of one row (the value rounded to the fixed point and back), where a model's
-- grain makes every group one row and a hash aggregate would only round each value.
create or replace temp macro xone(x) as cast(cast(x as decimal(38, 18)) as double);

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

-- SkuPriceDetails of one unit of a priced resource: FOCUS keys, then ours with the x_ prefix.
create or replace temp macro sku_price_details(resource, gpu_model, pricing_category) as
    (case resource
        when 'gpu' then json_object(
            'GpuCount', 1, 'x_GpuModel', gpu_model, 'x_PricingCategory', pricing_category)
        when 'cpu' then json_object('CoreCount', 1, 'x_PricingCategory', pricing_category)
        else json_object('MemorySize', 1, 'x_MemoryUnit', 'GiB', 'x_PricingCategory', pricing_category)
    end)::varchar;

-- The tags of a workload's charges (FOCUS 1.2 Tags; FOCUS 1.3 AllocatedTags in split mode).
create or replace temp macro workload_tags(tenant, workload_id, kind, usage_class) as
    json_object('tenant', tenant, 'workload', workload_id, 'kind', kind, 'usage_class', usage_class)::varchar;

-- The keys the cost records' own tags use (a workload's, an idle row's, a split's origin charge).
create or replace temp macro own_tag_keys() as
    ['tenant', 'workload', 'kind', 'usage_class', 'idle', 'idle_reason', 'zone', 'rack', 'pricing_category'];

-- A workload's tags with its pod labels after them (docs/cost-model.md, "Allocation by label"). A
-- label named like one of our own keys is kept as `label:<key>`: a Kubernetes key never holds a
-- colon, so the renamed key cannot meet another label.
create or replace temp macro with_labels(tags, labels) as
    case when labels is null or cardinality(labels) = 0 then tags
    else json_merge_patch(tags, to_json(map_from_entries(list_transform(map_entries(labels), lambda e:
        struct_pack(key := case when list_contains(own_tag_keys(), e.key) then 'label:' || e.key else e.key end,
                    value := e.value)))))::varchar
    end;

-- Run phases (x_Phase): the warm-up is the charge periods that end by the first submission plus
-- a tenth of the trace's submission window; the drain starts at the end of the charge period
-- holding the last submission. docs/cost-model.md, "Run phases".
create or replace temp macro warmup_fraction() as 0.1;

create or replace temp macro phase_of(period_start_s, warmup_end_s, drain_start_s) as
    case
        when period_start_s < warmup_end_s then 'warmup'
        when period_start_s >= drain_start_s then 'drain'
        else 'steady'
    end;

-- Rightsizing (gpu_finops.rightsizing, the same rule; a test checks they agree): the smallest
-- request per pod of at least gpus_per_pod × utilization / 0.8 (sized for 80 % engine-active)
-- that is smaller than today's, among eighths, quarters and halves of one device and whole GPUs;
-- null when none is smaller or the utilisation is unknown.
create or replace temp macro rightsized_gpus_per_pod(gpus_per_pod, utilization) as
    case when utilization is not null and gpus_per_pod > 0 then
        list_min(list_filter(
            [0.125, 0.25, 0.5] || list_transform(range(1, cast(floor(gpus_per_pod) as bigint) + 1), lambda x: cast(x as double)),
            lambda size: size >= gpus_per_pod * utilization / 0.8 - 1e-9 and size < gpus_per_pod
        ))
    end;

-- The fit tests of the idle waterfall (pipeline/registry.py WATERFALL, docs/cost-model.md §3.1):
-- what a waiting shape (min_pods pods of gpus_per_pod GPUs) could have used of the `free` GPUs
-- its cause's step has left on a model. fit_pods, unfit_free_gpus and all_free_gpus are the
-- model's (int_shape_fit); fits_packed_somewhere: its minimum fits, packed, the free GPUs of a
-- model it accepts. Trying sooner places a shape whose minimum fits the GPUs as they are:
create or replace temp macro fit_as_they_are(free, fit_pods, unfit_free_gpus, all_free_gpus, gpus_per_pod,
        min_pods, fits_packed_somewhere) as
    case when fit_pods >= min_pods then least(free, fit_pods * gpus_per_pod) else 0 end;
-- packing (the FGD paper's fragmentation) frees what sits on nodes where none of its pods fits,
-- for a shape whose minimum fits the model's free GPUs packed but not as they are:
create or replace temp macro fit_unusable_while_packed_fits(free, fit_pods, unfit_free_gpus, all_free_gpus,
        gpus_per_pod, min_pods, fits_packed_somewhere) as
    case when fit_pods < min_pods and min_pods * gpus_per_pod <= all_free_gpus + 1e-9
        then least(free, unfit_free_gpus) else 0 end;
-- and only more capacity runs a shape whose minimum is larger than the free GPUs of every model
-- it accepts:
create or replace temp macro fit_larger_than_free(free, fit_pods, unfit_free_gpus, all_free_gpus, gpus_per_pod,
        min_pods, fits_packed_somewhere) as
    case when not fits_packed_somewhere then free else 0 end;
