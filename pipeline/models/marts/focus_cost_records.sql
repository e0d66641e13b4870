-- grain: one row per run × charge period × node × workload × usage class, plus idle rows per run × charge period × node × idle reason
with usage as (
    select * from int_hourly_usage
),

idle as (
    select * from int_idle_by_cause
),

nodes as (
    select * from stg_nodes
),

prices as (
    select * from stg_prices
),

runs as (
    select * from stg_runs
),

workloads as (
    select * from stg_workloads
),

events as (
    select * from stg_events
),

cluster_queues as (
    -- the ClusterQueue that last admitted the workload
    select run_id, workload_id, arg_max(cluster_queue, seq) as cluster_queue
    from events
    where cluster_queue is not null
    group by all
),

allocated as (
    select
        u.run_id, u.period_index, u.period_start_s, u.period_end_s, u.node, u.workload_id,
        u.usage_class, cast(null as varchar) as idle_reason, sum(u.gpu_hours) as gpu_hours
    from usage as u
    group by all
),

unallocated as (
    -- a remainder below 1e-12 GPU-hours is float noise, not idle capacity
    select
        run_id, period_index, period_start_s, period_end_s, node, cast(null as varchar) as workload_id,
        'idle' as usage_class, idle_reason, gpu_hours
    from idle
    where gpu_hours > 1e-12
),

charges as (
    select * from allocated
    union all
    select * from unallocated
),

priced as (
    select
        c.*,
        r.start_ts,
        n.gpu_model,
        n.zone,
        n.rack,
        n.pricing_category,
        coalesce(w.tenant, '__idle__') as tenant,
        w.queue,
        w.priority,
        w.kind,
        cq.cluster_queue,
        p.list_usd_per_gpu_hour as list_unit_price,
        case n.pricing_category
            when 'Committed' then p.contracted_usd_per_gpu_hour
            when 'Dynamic' then p.spot_usd_per_gpu_hour
            else p.list_usd_per_gpu_hour
        end as contracted_unit_price,
        ts_at(r.start_ts, c.period_start_s) as charge_period_start,
        ts_at(r.start_ts, c.period_end_s) as charge_period_end
    from charges as c
    inner join runs as r using (run_id)
    inner join nodes as n using (run_id, node)
    inner join prices as p on p.run_id = c.run_id and p.gpu_model = n.gpu_model
    left join workloads as w using (run_id, workload_id)
    left join cluster_queues as cq using (run_id, workload_id)
),

costed as (
    select
        *,
        -- one product, computed once: the cost identities hold bit for bit
        list_unit_price * gpu_hours as list_cost,
        contracted_unit_price * gpu_hours as contracted_cost,
        lower(regexp_replace(gpu_model, '[^A-Za-z0-9]+', '-', 'g')) as sku_slug
    from priced
),

final as (
    select
        zone as AvailabilityZone,
        contracted_cost as BilledCost,
        'gpu-finops-internal' as BillingAccountId,
        'GPU Platform (internal chargeback)' as BillingAccountName,
        'Internal Chargeback Account' as BillingAccountType,
        'USD' as BillingCurrency,
        date_trunc('month', charge_period_start) + interval 1 month as BillingPeriodEnd,
        date_trunc('month', charge_period_start) as BillingPeriodStart,
        'Usage' as ChargeCategory,
        cast(null as varchar) as ChargeClass,
        case
            when usage_class = 'idle'
                then format('Idle ({}) {} GPU-hours on {}', idle_reason, gpu_model, node)
            else format('{} GPU-hours for workload {} ({})', gpu_model, workload_id, usage_class)
        end as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        charge_period_end as ChargePeriodEnd,
        charge_period_start as ChargePeriodStart,
        cast(null as varchar) as CommitmentDiscountStatus,
        gpu_hours as ConsumedQuantity,
        'GPU-Hours' as ConsumedUnit,
        contracted_cost as ContractedCost,
        contracted_unit_price as ContractedUnitPrice,
        contracted_cost as EffectiveCost,
        format('INV-{}-{}', run_id, strftime(charge_period_start, '%Y-%m')) as InvoiceId,
        'Internal GPU Platform' as InvoiceIssuerName,
        list_cost as ListCost,
        list_unit_price as ListUnitPrice,
        pricing_category as PricingCategory,
        'USD' as PricingCurrency,
        contracted_unit_price as PricingCurrencyContractedUnitPrice,
        contracted_cost as PricingCurrencyEffectiveCost,
        list_unit_price as PricingCurrencyListUnitPrice,
        gpu_hours as PricingQuantity,
        'GPU-Hours' as PricingUnit,
        'Internal GPU Platform' as ProviderName,
        'Internal GPU Platform' as PublisherName,
        'on-prem' as RegionId,
        'On-premises' as RegionName,
        format('k8s://{}/node/{}', run_id, node) as ResourceId,
        node as ResourceName,
        'GPU Node' as ResourceType,
        'Compute' as ServiceCategory,
        'Kubernetes GPU Cluster' as ServiceName,
        'Containers' as ServiceSubcategory,
        format('gpu-{}', sku_slug) as SkuId,
        'GPU Usage' as SkuMeter,
        json_object(
            'GpuCount', 1, 'x_GpuModel', gpu_model, 'x_PricingCategory', pricing_category
        )::varchar as SkuPriceDetails,
        format('gpu-{}-{}', sku_slug, lower(pricing_category)) as SkuPriceId,
        format('k8s://{}/namespace/{}', run_id, tenant) as SubAccountId,
        tenant as SubAccountName,
        'Kubernetes Namespace' as SubAccountType,
        case
            when usage_class = 'idle'
                then json_object('idle', true, 'idle_reason', idle_reason)::varchar
            else json_object(
                'tenant', tenant, 'workload', workload_id, 'kind', kind, 'usage_class', usage_class
            )::varchar
        end as Tags,
        run_id as x_RunId,
        node as x_Node,
        gpu_model as x_GpuModel,
        rack as x_Rack,
        tenant as x_Tenant,
        workload_id as x_Workload,
        queue as x_Queue,
        cluster_queue as x_ClusterQueue,
        priority as x_Priority,
        usage_class as x_UsageClass,
        idle_reason as x_IdleReason
    from costed
    order by x_RunId, ChargePeriodStart, x_Node, x_UsageClass, x_Workload, x_IdleReason
)

select * from final
