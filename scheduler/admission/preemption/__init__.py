"""Kueue preemption: which admitted workloads to evict so that a pending one fits its quota.

Sources: kueue pkg/scheduler/preemption/ (semantics reference §4.6, §4.7). Eviction is
quota-only and of whole workloads. The modules follow Kueue's layout:

- `common`: the shared vocabulary: preemption reasons, the oracle's answer, targets, the
  preemption policies and the candidate ordering [common/];
- `search`: remove victims until the preemptor fits, then add back what is not needed
  (the fewest victims) [preemption.go fillBackWorkloads];
- `classical`: candidates and runs when fair sharing is off [classical/];
- `fair_sharing`: the share-based strategies when it is on [fairsharing/];
- `preemptor`: the entry point: `Preemptor.targets` and the oracle flavor assignment asks
  (`Preemptor.simulate`) [preemption.go, preemption_oracle.go].
"""
