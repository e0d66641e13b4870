-- grain: one Usage row per run × charge period × node × priced resource × workload × usage class × preemptor × borrowed × usage sub-class, plus idle Usage rows per run × charge period × node × priced resource × idle reason, plus one Purchase row per commitment pool × billing period
-- one query for both layouts: FOCUS 1.2 rows (the default) and FOCUS 1.3 split cost allocation
-- (`focus_split()`: each node-period of a resource is an origin charge; workloads are its
-- allocated parts, idle its unallocated remainder). The build keeps the columns of the chosen
-- layout (pipeline.focus.columns); the others are computed and dropped.
with lines as not materialized (
    select * from int_cost_lines
),

commitments as not materialized (
    select * from int_commitments
),

node_prices as not materialized (
    select * from int_node_prices
),

nodes as not materialized (
    select * from stg_nodes
),

runs as not materialized (
    select * from stg_runs
),

phases as not materialized (
    select * from int_run_phases
),

workloads as not materialized (
    select * from stg_workloads
),

events as not materialized (
    select * from stg_events
),

device_profiles as (
    -- DRA only: the devices a workload's GPU-hours on a node are made of (a MIG profile). Its GPU
    -- rows get their own SkuPriceId under the GPU's SkuId, whose SkuPriceDetails name the profile
    -- and the device's share of the GPU (FOCUS: the details are shared by every row of a
    -- SkuPriceId). Split mode keeps the node-period's SkuPriceId: its parts share their origin's.
    select
        run_id,
        workload_id,
        node,
        'gpu' as resource,
        device_profile,
        gpu_share,
        '-' || lower(regexp_replace(device_profile, '[^A-Za-z0-9]+', '-', 'g'))
            || coalesce('-' || cast(round(gpu_share * 1000) as bigint), '') as sku_price_suffix
    from int_device_profiles
    where device_profile <> 'whole' and not focus_split()
),

cluster_queues as (
    -- the ClusterQueue that last admitted (or queued) the workload
    select run_id, workload_id, arg_max(cluster_queue, seq) as cluster_queue
    from events
    where cluster_queue is not null
    group by all
),

-- The strings that depend only on the node and resource, the workload or the charge period are
-- formatted once per node, workload or period here and joined to the rows (n:1 joins, so the
-- rows keep their order and every value is the one the per-row formatting gave).
node_info as (
    select
        p.run_id,
        p.node,
        p.resource,
        p.gpu_model,
        p.pricing_category,
        p.unit,
        p.list_unit_price,
        p.contracted_unit_price,
        p.effective_unit_price,
        p.sku_id,
        p.sku_price_id,
        n.zone,
        n.rack,
        r.start_ts,
        -- the Committed capacity of a SKU is one pooled commitment (int_commitments)
        case when p.pricing_category = 'Committed'
            then format('k8s://{}/commitment/{}', p.run_id, p.sku_id) end as commitment_id,
        format('Committed {} capacity ({})', p.resource, p.sku_id) as commitment_name,
        format('k8s://{}/node/{}', p.run_id, p.node) as resource_id,
        case when p.gpu_model is null then 'CPU Node' else 'GPU Node' end as resource_type,
        case p.resource when 'gpu' then 'GPU Usage' when 'cpu' then 'CPU Usage' else 'Memory Usage' end
            as sku_meter,
        sku_price_details(p.resource, p.gpu_model, p.pricing_category) as sku_price_details,
        -- ChargeDescription pieces: format('{} {} …', a, b) is a || ' ' || b || …
        coalesce(p.gpu_model, 'CPU node') || ' ' || p.unit || ' on ' || p.node as idle_description_tail,
        coalesce(p.gpu_model, 'CPU node') || ' ' || p.unit || ' for workload ' as workload_description_head,
        format('{} on {}', p.unit, p.node) as split_description,
        format('{} on {} (unused commitment)', p.unit, p.node) as split_unused_description,
        format('k8s://{}/namespace/{}', p.run_id, '__idle__') as idle_sub_account_id,
        format('k8s://{}/cluster', p.run_id) as split_sub_account_id,
        json_object('zone', n.zone, 'rack', n.rack, 'pricing_category', p.pricing_category)::varchar
            as split_tags,
        p.resource || '-request-hours' as allocated_method_id
    from node_prices as p
    inner join nodes as n using (run_id, node)
    inner join runs as r using (run_id)
),

workload_info as (
    select
        w.run_id,
        w.workload_id,
        coalesce(w.tenant, '__idle__') as tenant,
        w.queue,
        w.priority,
        w.kind,
        cq.cluster_queue,
        format('k8s://{}/namespace/{}', w.run_id, coalesce(w.tenant, '__idle__')) as sub_account_id,
        format('k8s://{}/workload/{}', w.run_id, w.workload_id) as allocated_resource_id,
        -- pod labels join the workload's tags (and AllocatedTags in split mode)
        with_labels(workload_tags(coalesce(w.tenant, '__idle__'), w.workload_id, w.kind, 'productive'), w.labels)
            as tags_productive,
        with_labels(workload_tags(coalesce(w.tenant, '__idle__'), w.workload_id, w.kind, 'gang_wait'), w.labels)
            as tags_gang_wait,
        with_labels(workload_tags(coalesce(w.tenant, '__idle__'), w.workload_id, w.kind, 'lost_to_preemption'),
            w.labels) as tags_lost_to_preemption
    from workloads as w
    left join cluster_queues as cq using (run_id, workload_id)
),

period_info as (
    select
        run_id,
        period_index,
        date_trunc('month', charge_period_start) as billing_period_start,
        date_trunc('month', charge_period_start) + interval 1 month as billing_period_end,
        format('INV-{}-{}', run_id, strftime(charge_period_start, '%Y-%m')) as invoice_id,
        phase
    from (
        select
            r.run_id,
            k as period_index,
            ts_at(r.start_ts, k * r.charge_period_s) as charge_period_start,
            phase_of(k * r.charge_period_s, ph.warmup_end_s, ph.drain_start_s) as phase
        from runs as r
        inner join phases as ph using (run_id),
            unnest(range(0, cast(ceil(r.horizon_s / r.charge_period_s) as bigint))) as t(k)
    )
),

preemptor_info as (
    -- the team of each workload that preempted another
    select w.run_id, w.workload_id as preemptor, w.tenant as preemptor_tenant
    from workloads as w
    where exists (
        select 1 from lines as l
        where l.run_id = w.run_id and l.preemptor = w.workload_id
    )
),

usage_lines as (
    select
        l.*,
        p.gpu_model,
        p.pricing_category,
        p.unit,
        p.list_unit_price,
        p.contracted_unit_price,
        p.effective_unit_price,
        p.sku_id,
        p.sku_price_id || coalesce(dp.sku_price_suffix, '') as sku_price_id,
        p.zone,
        p.rack,
        coalesce(w.tenant, '__idle__') as tenant,
        w.queue,
        w.priority,
        w.kind,
        w.cluster_queue,
        ts_at(p.start_ts, l.period_start_s) as charge_period_start,
        ts_at(p.start_ts, l.period_end_s) as charge_period_end,
        p.commitment_id,
        case when p.pricing_category = 'Committed'
            then case when l.usage_class = 'idle' then 'Unused' else 'Used' end end as commitment_status,
        p.commitment_name,
        p.resource_id,
        p.resource_type,
        p.sku_meter,
        case when dp.device_profile is null then p.sku_price_details
            else json_merge_patch(p.sku_price_details, json_object(
                -- a partition's profile (a MIG slice), else what the devices are (capacity, mixed)
                'x_MigProfile', case when dp.device_profile not in ('capacity', 'mixed') then dp.device_profile end,
                'x_DeviceProfile', case when dp.device_profile in ('capacity', 'mixed') then dp.device_profile end,
                'x_GpuShare', dp.gpu_share))::varchar
        end as sku_price_details,
        p.idle_description_tail,
        p.workload_description_head,
        p.split_description,
        p.split_unused_description,
        coalesce(w.sub_account_id, p.idle_sub_account_id) as sub_account_id,
        p.split_sub_account_id,
        p.split_tags,
        p.allocated_method_id,
        w.allocated_resource_id,
        case l.usage_class
            when 'productive' then w.tags_productive
            when 'gang_wait' then w.tags_gang_wait
            when 'lost_to_preemption' then w.tags_lost_to_preemption
        end as workload_tag_json,
        pi.billing_period_start,
        pi.billing_period_end,
        pi.invoice_id,
        pi.phase,
        pt.preemptor_tenant
    from lines as l
    inner join node_info as p using (run_id, node, resource)
    left join workload_info as w using (run_id, workload_id)
    left join period_info as pi using (run_id, period_index)
    left join preemptor_info as pt using (run_id, preemptor)
    left join device_profiles as dp using (run_id, workload_id, node, resource)
),

usage_costed as (
    select
        *,
        -- one product, computed once: the cost identities hold bit for bit
        list_unit_price * quantity as list_cost,
        contracted_unit_price * quantity as contracted_cost,
        effective_unit_price * quantity as effective_cost,
        -- the origin charge of a split: the node-period of this resource (a Committed node's
        -- is two charges, its Used and its Unused part)
        xsum(quantity) over (
            partition by run_id, period_index, node, resource, commitment_status
        ) as origin_quantity
    from usage_lines
),

usage_rows as (
    select
        zone as AvailabilityZone,
        -- a Committed node's usage was paid by the commitment's Purchase rows
        case when commitment_id is null then effective_cost else 0.0 end as BilledCost,
        'gpu-finops-internal' as BillingAccountId,
        'GPU Platform (internal chargeback)' as BillingAccountName,
        'Internal Chargeback Account' as BillingAccountType,
        'USD' as BillingCurrency,
        coalesce(billing_period_end, date_trunc('month', charge_period_start) + interval 1 month)
            as BillingPeriodEnd,
        coalesce(billing_period_start, date_trunc('month', charge_period_start)) as BillingPeriodStart,
        'Usage' as ChargeCategory,
        cast(null as varchar) as ChargeClass,
        case
            when focus_split() then
                case commitment_status when 'Unused' then split_unused_description else split_description end
            when usage_class = 'idle' then 'Idle (' || idle_reason || ') ' || idle_description_tail
            else workload_description_head || workload_id || ' (' || usage_class || ')'
        end as ChargeDescription,
        'Usage-Based' as ChargeFrequency,
        charge_period_end as ChargePeriodEnd,
        charge_period_start as ChargePeriodStart,
        case when commitment_id is not null then 'Usage' end as CommitmentDiscountCategory,
        commitment_id as CommitmentDiscountId,
        case when commitment_id is not null then commitment_name end as CommitmentDiscountName,
        case when commitment_id is not null then quantity end as CommitmentDiscountQuantity,
        commitment_status as CommitmentDiscountStatus,
        case when commitment_id is not null then 'Committed Capacity' end as CommitmentDiscountType,
        case when commitment_id is not null then unit end as CommitmentDiscountUnit,
        -- what workloads consumed; idle capacity consumed nothing: 0, and null on an Unused
        -- commitment row as FOCUS requires. The capacity is PricingQuantity on every row.
        case
            when commitment_status = 'Unused' then null
            when usage_class = 'idle' then 0.0
            else quantity
        end as ConsumedQuantity,
        case when commitment_status = 'Unused' then null else unit end as ConsumedUnit,
        contracted_cost as ContractedCost,
        contracted_unit_price as ContractedUnitPrice,
        -- amortized: Committed usage carries its share of the commitment at the commitment rate;
        -- ContractedCost excludes the commitment discount (FOCUS), EffectiveCost carries it
        effective_cost as EffectiveCost,
        coalesce(invoice_id, format('INV-{}-{}', run_id, strftime(charge_period_start, '%Y-%m'))) as InvoiceId,
        'Internal GPU Platform' as InvoiceIssuerName,
        list_cost as ListCost,
        list_unit_price as ListUnitPrice,
        pricing_category as PricingCategory,
        'USD' as PricingCurrency,
        contracted_unit_price as PricingCurrencyContractedUnitPrice,
        effective_cost as PricingCurrencyEffectiveCost,
        list_unit_price as PricingCurrencyListUnitPrice,
        quantity as PricingQuantity,
        unit as PricingUnit,
        'Internal GPU Platform' as ProviderName,
        'Internal GPU Platform' as PublisherName,
        'on-prem' as RegionId,
        'On-premises' as RegionName,
        resource_id as ResourceId,
        node as ResourceName,
        resource_type as ResourceType,
        'Compute' as ServiceCategory,
        'Kubernetes GPU Cluster' as ServiceName,
        'Containers' as ServiceSubcategory,
        sku_id as SkuId,
        sku_meter as SkuMeter,
        sku_price_details as SkuPriceDetails,
        sku_price_id as SkuPriceId,
        case when focus_split() then split_sub_account_id else sub_account_id end as SubAccountId,
        case when focus_split() then run_id else tenant end as SubAccountName,
        case when focus_split() then 'Kubernetes Cluster' else 'Kubernetes Namespace' end
            as SubAccountType,
        case
            -- split: every part carries the origin charge's tags; the workload's go to AllocatedTags
            when focus_split() then split_tags
            when usage_class = 'idle'
                then json_object('idle', true, 'idle_reason', idle_reason)::varchar
            else coalesce(workload_tag_json, workload_tags(tenant, workload_id, kind, usage_class))
        end as Tags,
        -- FOCUS 1.3 split cost allocation
        json_object('Elements', json_array(json_object(
            'AllocatedRatio', quantity / origin_quantity, 'UsageUnit', unit, 'UsageQuantity', quantity
        )))::varchar as AllocatedMethodDetails,
        allocated_method_id as AllocatedMethodId,
        case when workload_id is not null
            then coalesce(allocated_resource_id, format('k8s://{}/workload/{}', run_id, workload_id))
        end as AllocatedResourceId,
        workload_id as AllocatedResourceName,
        case when workload_id is not null
            then coalesce(workload_tag_json, workload_tags(tenant, workload_id, kind, usage_class)) end
            as AllocatedTags,
        'Internal GPU Platform' as HostProviderName,
        'Internal GPU Platform' as ServiceProviderName,
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
        idle_reason as x_IdleReason,
        resource as x_Resource,
        borrowed as x_Borrowed,
        phase as x_Phase,
        preemptor as x_PreemptedBy,
        preemptor_tenant as x_PreemptedByTenant,
        usage_subclass as x_UsageSubClass,
        active_fraction as x_GpuActiveFraction
    from usage_costed
),

purchase_costed as (
    select
        c.*,
        c.list_unit_price * c.committed_quantity as list_cost,
        c.contracted_unit_price * c.committed_quantity as contracted_cost
    from commitments as c
),

purchase_rows as (
    select
        -- a pool spans nodes (and zones)
        cast(null as varchar) as AvailabilityZone,
        contracted_cost as BilledCost,
        'gpu-finops-internal' as BillingAccountId,
        'GPU Platform (internal chargeback)' as BillingAccountName,
        'Internal Chargeback Account' as BillingAccountType,
        'USD' as BillingCurrency,
        billing_period_start + interval 1 month as BillingPeriodEnd,
        billing_period_start as BillingPeriodStart,
        'Purchase' as ChargeCategory,
        cast(null as varchar) as ChargeClass,
        format('Monthly commitment: {} {} of {} Committed node(s)', coalesce(gpu_model, 'CPU node'), unit, nodes)
            as ChargeDescription,
        'Recurring' as ChargeFrequency,
        charge_period_end as ChargePeriodEnd,
        charge_period_start as ChargePeriodStart,
        'Usage' as CommitmentDiscountCategory,
        commitment_id as CommitmentDiscountId,
        format('Committed {} capacity ({})', resource, sku_id) as CommitmentDiscountName,
        committed_quantity as CommitmentDiscountQuantity,
        cast(null as varchar) as CommitmentDiscountStatus,
        'Committed Capacity' as CommitmentDiscountType,
        unit as CommitmentDiscountUnit,
        cast(null as double) as ConsumedQuantity,
        cast(null as varchar) as ConsumedUnit,
        contracted_cost as ContractedCost,
        contracted_unit_price as ContractedUnitPrice,
        -- the purchase covers usage rows, which carry its cost amortized
        0.0 as EffectiveCost,
        format('INV-{}-{}', run_id, strftime(billing_period_start, '%Y-%m')) as InvoiceId,
        'Internal GPU Platform' as InvoiceIssuerName,
        list_cost as ListCost,
        list_unit_price as ListUnitPrice,
        -- FOCUS: `Committed` is for usage a commitment covers, not for its purchase
        'Standard' as PricingCategory,
        'USD' as PricingCurrency,
        contracted_unit_price as PricingCurrencyContractedUnitPrice,
        0.0 as PricingCurrencyEffectiveCost,
        list_unit_price as PricingCurrencyListUnitPrice,
        committed_quantity as PricingQuantity,
        unit as PricingUnit,
        'Internal GPU Platform' as ProviderName,
        'Internal GPU Platform' as PublisherName,
        'on-prem' as RegionId,
        'On-premises' as RegionName,
        commitment_id as ResourceId,
        format('{} commitment', sku_id) as ResourceName,
        'Commitment' as ResourceType,
        'Compute' as ServiceCategory,
        'Kubernetes GPU Cluster' as ServiceName,
        'Containers' as ServiceSubcategory,
        'commitment-' || sku_id as SkuId,
        case resource when 'gpu' then 'GPU Commitment' when 'cpu' then 'CPU Commitment'
            else 'Memory Commitment' end as SkuMeter,
        sku_price_details(resource, gpu_model, 'Committed') as SkuPriceDetails,
        'commitment-' || sku_id || '-monthly' as SkuPriceId,
        cast(null as varchar) as SubAccountId,
        cast(null as varchar) as SubAccountName,
        cast(null as varchar) as SubAccountType,
        cast(null as varchar) as Tags,
        -- not part of a split
        cast(null as varchar) as AllocatedMethodDetails,
        cast(null as varchar) as AllocatedMethodId,
        cast(null as varchar) as AllocatedResourceId,
        cast(null as varchar) as AllocatedResourceName,
        cast(null as varchar) as AllocatedTags,
        'Internal GPU Platform' as HostProviderName,
        'Internal GPU Platform' as ServiceProviderName,
        run_id as x_RunId,
        cast(null as varchar) as x_Node,
        gpu_model as x_GpuModel,
        cast(null as varchar) as x_Rack,
        '__commitment__' as x_Tenant,
        cast(null as varchar) as x_Workload,
        cast(null as varchar) as x_Queue,
        cast(null as varchar) as x_ClusterQueue,
        cast(null as integer) as x_Priority,
        'commitment_purchase' as x_UsageClass,
        cast(null as varchar) as x_IdleReason,
        resource as x_Resource,
        false as x_Borrowed,
        cast(null as varchar) as x_Phase,
        cast(null as varchar) as x_PreemptedBy,
        cast(null as varchar) as x_PreemptedByTenant,
        cast(null as varchar) as x_UsageSubClass,
        cast(null as double) as x_GpuActiveFraction
    from purchase_costed
),

final as (
    select * from usage_rows
    union all by name
    select * from purchase_rows
)

-- no ORDER BY: sorting a million wide rows is most of this model's time; the export sorts
select * from final
