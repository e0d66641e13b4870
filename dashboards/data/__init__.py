"""The one read-only data layer of the dashboard and the report (docs/contracts.md, marts).

Every public function takes an open DuckDB connection and returns a pandas DataFrame (or plain
values); nothing here imports Streamlit. The database is opened read-only with external
(file/network) access switched off, user values reach SQL only as bound parameters, and only
mart tables are read. The functions live in one module per group of pages and are re-exported
here, so callers write ``from dashboards import data`` and ``data.<name>(con, …)``.
"""

from dashboards.data.advice import ADVICE_TRIAL_COLUMNS, TEAM_METRICS, advice_teams, advice_trials
from dashboards.data.allocation import (
    UNLABELLED,
    GroupBy,
    check_label_key,
    label_keys,
    label_showback,
    showback,
)
from dashboards.data.budgets import (
    COST_CENTRE_LABEL_KEYS,
    cost_centre_label,
    daily_label_spend,
    daily_team_spend,
    label_values,
)
from dashboards.data.cascades import (
    CHAIN_COLUMNS,
    has_cascades,
    preemption_chains,
    preemption_depths,
    preemption_pairs,
)
from dashboards.data.core import (
    DB_ENV_VAR,
    DEFAULT_PHASE,
    IDLE_TENANT,
    PHASES,
    READ_ONLY_CONFIG,
    TIME_BUCKETS,
    USAGE_CLASSES,
    Filters,
    SqlLimits,
    check_bucket,
    connect_read_only,
    db_fingerprint,
    db_path_from_env,
    list_gpu_models,
    list_runs,
    list_tenants,
    marts_missing,
    parse_seconds,
    parse_size,
    phase_window,
    pick_time_bucket,
    require_db,
    run_date_range,
    run_phases,
    search_workloads,
    table_columns,
    window_label,
    with_phase,
)
from dashboards.data.costs import (
    CHARGEBACK_POLICY,
    HEATMAP_LEVELS,
    IDLE_POLICIES,
    fragmentation_by_model,
    idle_by_cause_over_time,
    idle_heatmap,
    team_cost_over_time,
    team_showback,
)
from dashboards.data.efficiency import allocated_idle, gpu_efficiency
from dashboards.data.finops import (
    TRAINING_KINDS,
    commitment_pools,
    eviction_losses,
    idle_by_payment,
    savings,
    training_run_costs,
    unservable_demand,
    waiting_cost_by_team,
)
from dashboards.data.overview import (
    costliest_workloads,
    headline_metrics,
    idle_cost_by_cause,
    partial_placement_workloads,
    runs_compared,
    runs_waits,
    spend_by_team,
    usage_class_over_time,
)
from dashboards.data.partitions import (
    DEVICE_PROFILE_COLUMNS,
    FRAGMENTATION_LABEL,
    device_profile_cost,
)
from dashboards.data.pending import (
    pending_by_reason,
    pending_workloads,
    queue_position,
    workload_details,
    workload_pods,
    workload_timeline,
)
from dashboards.data.queues import (
    QUEUE_USAGE_COLUMNS,
    borrowed_by_team,
    cluster_queue_holdings,
    list_cluster_queues,
    preemption_loss,
    preemption_over_time,
    preemption_summary,
    preemption_victims,
    queue_usage_over_time,
    queue_usage_summary,
)
from dashboards.data.scenarios import (
    BASELINE_PROFILE,
    DEFAULT_RANK_BY,
    DEFAULT_WINDOW,
    RANKING_METRICS,
    SCENARIO_METRICS,
    WINDOWS,
    common_window,
    default_baseline,
    effective_window,
    scenario_by_team,
    scenario_compare,
    scenario_cost_breakdown,
    scenario_ranking,
    scenario_runs,
    scenario_usage,
    wait_stats,
    why_the_winner_wins,
)

# The queries a page may run through dashboards.cache.query (each takes a connection first).
QUERIES = frozenset({
    "advice_trials", "advice_teams", "daily_team_spend", "daily_label_spend", "cost_centre_label", "label_values",
    "marts_missing", "list_runs", "run_date_range", "list_tenants", "list_gpu_models", "search_workloads",
    "headline_metrics", "spend_by_team", "usage_class_over_time", "idle_cost_by_cause",
    "costliest_workloads", "partial_placement_workloads", "runs_compared", "runs_waits",
    "team_showback", "team_cost_over_time", "idle_by_cause_over_time", "idle_heatmap",
    "fragmentation_by_model", "pending_workloads", "queue_position", "workload_details",
    "workload_pods", "workload_timeline", "list_cluster_queues", "queue_usage_over_time",
    "queue_usage_summary", "borrowed_by_team", "cluster_queue_holdings", "preemption_loss",
    "preemption_victims", "preemption_over_time", "scenario_compare", "scenario_by_team", "scenario_usage",
    "wait_stats", "scenario_runs", "scenario_ranking", "scenario_cost_breakdown",
    "run_phases", "unservable_demand", "idle_by_payment", "commitment_pools",
    "savings", "waiting_cost_by_team", "eviction_losses", "training_run_costs",
    "gpu_efficiency", "allocated_idle", "default_baseline", "effective_window", "common_window",
    "label_keys", "label_showback", "showback", "preemption_chains", "preemption_pairs", "preemption_depths",
    "has_cascades", "device_profile_cost",
})

__all__ = [
    "DB_ENV_VAR", "DEFAULT_PHASE", "Filters", "HEATMAP_LEVELS", "IDLE_POLICIES", "CHARGEBACK_POLICY", "IDLE_TENANT",
    "ADVICE_TRIAL_COLUMNS", "TEAM_METRICS", "advice_teams", "advice_trials", "daily_team_spend", "marts_missing",
    "COST_CENTRE_LABEL_KEYS", "cost_centre_label", "daily_label_spend", "label_values",
    "PHASES", "QUERIES", "QUEUE_USAGE_COLUMNS", "RANKING_METRICS", "READ_ONLY_CONFIG", "SCENARIO_METRICS",
    "SqlLimits", "TIME_BUCKETS", "TRAINING_KINDS", "USAGE_CLASSES", "borrowed_by_team", "check_bucket",
    "cluster_queue_holdings", "commitment_pools", "connect_read_only", "eviction_losses",
    "idle_by_payment", "phase_window", "run_phases", "savings", "training_run_costs", "unservable_demand",
    "waiting_cost_by_team", "window_label", "with_phase",
    "costliest_workloads", "db_fingerprint", "db_path_from_env", "fragmentation_by_model",
    "headline_metrics", "idle_by_cause_over_time", "idle_cost_by_cause", "idle_heatmap",
    "list_cluster_queues", "list_gpu_models", "list_runs", "list_tenants",
    "parse_seconds", "parse_size",
    "partial_placement_workloads", "pending_by_reason", "pending_workloads", "pick_time_bucket",
    "preemption_loss", "preemption_over_time", "preemption_summary", "preemption_victims",
    "queue_position",
    "queue_usage_over_time", "queue_usage_summary", "require_db", "run_date_range",
    "runs_compared", "runs_waits", "scenario_by_team", "scenario_compare", "scenario_cost_breakdown",
    "scenario_ranking", "scenario_runs", "scenario_usage", "WINDOWS",
    "search_workloads", "spend_by_team", "table_columns", "team_cost_over_time", "team_showback",
    "usage_class_over_time", "wait_stats", "workload_details", "workload_pods",
    "workload_timeline", "gpu_efficiency", "allocated_idle",
    "device_profile_cost", "DEVICE_PROFILE_COLUMNS", "FRAGMENTATION_LABEL",
    "BASELINE_PROFILE", "DEFAULT_RANK_BY", "DEFAULT_WINDOW", "common_window", "default_baseline", "effective_window",
    "why_the_winner_wins",
    "GroupBy", "UNLABELLED", "check_label_key", "label_keys", "label_showback", "showback",
    "CHAIN_COLUMNS", "has_cascades", "preemption_chains", "preemption_depths", "preemption_pairs",
]
