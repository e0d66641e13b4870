-- per commitment: Σ EffectiveCost of its Usage rows = Σ BilledCost of its Purchase rows, and Used + Unused quantity = the committed quantity (tolerance 1e-9 relative)
with records as (
    select * from focus_cost_records
    where CommitmentDiscountId is not null
),

per_commitment as (
    select
        x_RunId as run_id,
        CommitmentDiscountId as commitment_id,
        coalesce(sum(BilledCost) filter (where ChargeCategory = 'Purchase'), 0) as purchased_cost,
        coalesce(sum(EffectiveCost) filter (where ChargeCategory = 'Usage'), 0) as amortized_cost,
        coalesce(sum(PricingQuantity) filter (where ChargeCategory = 'Purchase'), 0) as committed_quantity,
        coalesce(sum(PricingQuantity) filter (where ChargeCategory = 'Usage'), 0) as covered_quantity
    from records
    group by all
),

final as (
    select *
    from per_commitment
    where abs(purchased_cost - amortized_cost) > 1e-9 * greatest(1, purchased_cost)
        or abs(committed_quantity - covered_quantity) > 1e-9 * greatest(1, committed_quantity)
)

select * from final
