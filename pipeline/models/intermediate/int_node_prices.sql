-- grain: one row per run × node × priced resource (gpu, cpu, memory)
-- a cpu/memory price applies through the row of the node's GPU model, else the default row
-- (empty gpu_model); a resource the book does not price, or the node does not have, is not costed
with nodes as (
    select * from stg_nodes
),

prices as not materialized (
    select * from stg_prices
),

node_resources as (
    select run_id, node, gpu_model, pricing_category, 'gpu' as resource, cast(gpus as double) as units
    from nodes
    where gpus > 0
    union all
    select run_id, node, gpu_model, pricing_category, 'cpu', cpu_cores from nodes where cpu_cores > 0
    union all
    select run_id, node, gpu_model, pricing_category, 'memory', memory_gib from nodes where memory_gib > 0
),

resolved as (
    select
        nr.*,
        coalesce(own.list_unit_price, fallback.list_unit_price) as list_unit_price,
        coalesce(own.contracted_unit_price, fallback.contracted_unit_price) as contracted_price,
        coalesce(own.spot_unit_price, fallback.spot_unit_price) as spot_price,
        -- the price row used: its GPU model, null for the default row
        case when own.resource is not null then nr.gpu_model end as price_model
    from node_resources as nr
    left join prices as own
        on own.run_id = nr.run_id and own.resource = nr.resource and own.gpu_model = nr.gpu_model
    left join prices as fallback
        on fallback.run_id = nr.run_id and fallback.resource = nr.resource and fallback.gpu_model is null
    where own.resource is not null or fallback.resource is not null
),

final as (
    select
        run_id,
        node,
        resource,
        gpu_model,
        pricing_category,
        units,
        case resource when 'gpu' then 'GPU-Hours' when 'cpu' then 'Core-Hours' else 'GiB-Hours' end as unit,
        list_unit_price,
        -- FOCUS ContractedUnitPrice: the negotiated price excluding commitment discounts, the list
        -- price where nothing else is negotiated. The book's contracted rate is the commitment's,
        -- so a Committed node's contracted price is the list price; spot is its own (dynamic)
        -- price, not a commitment discount
        case pricing_category when 'Dynamic' then spot_price else list_unit_price end as contracted_unit_price,
        -- what one unit costs once every discount is applied (EffectiveCost): the commitment rate
        -- on Committed nodes (amortized from its purchase), spot on Dynamic, list on Standard
        case pricing_category
            when 'Committed' then contracted_price
            when 'Dynamic' then spot_price
            else list_unit_price
        end as effective_unit_price,
        -- SkuId: one per resource × GPU model, stable across pricing categories;
        -- SkuPriceId: one per SkuId × pricing category
        case resource when 'gpu' then 'gpu' when 'cpu' then 'cpu-core' else 'memory-gib' end
            || coalesce('-' || lower(regexp_replace(price_model, '[^A-Za-z0-9]+', '-', 'g')), '')
            as sku_id,
        price_model
    from resolved
)

select *, sku_id || '-' || lower(pricing_category) as sku_price_id from final
