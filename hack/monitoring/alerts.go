package main

import "fmt"

// alert is one Prometheus alerting rule and its runbook section (docs/operators/alerts.md).
type alert struct {
	Name     string
	Expr     string
	For      string
	Severity string
	Summary  string
	// Description may use the alert's labels ({{ $labels.x }}) and value ({{ $value }}).
	Description string
}

// ourPods selects kube-state-metrics' series of our static pods' mirror pods,
// pv-controller-manager-<node> in kube-system (shadow replicas have the same name): ours is
// installed on the cluster while one exists.
const ourPods = `kube_pod_info{namespace="kube-system", pod=~"pv-controller-manager-.+"}`

// alerts are the binder's alerts. sel is the selector of the binder's scrape job, e.g.
// job="pv-controller-manager".
func alerts(sel string) []alert {
	return []alert{
		{
			Name: "PVControllerManagerDown",
			// Pods of ours exist (kube-state-metrics: our mirror pods, with --shadow too) and none is
			// scraped, or Prometheus has no target of the job at all (a ServiceMonitor it does not
			// select). Quiet while ours is not installed: before the rollout, after a rollback.
			Expr: fmt.Sprintf(`count(%s) > 0
unless on()
max(up{%s}) == 1`, ourPods, sel),
			For:         "15m",
			Severity:    "critical",
			Summary:     "pv-controller-manager pods exist and none of them is being scraped.",
			Description: "{{ $value }} pv-controller-manager pods exist in kube-system and Prometheus scrapes none of them (no target of the job, or every target down): their metrics and alerts are lost, and while none runs nothing of ours binds.",
		},
		{
			Name: "PVBinderNoLeader",
			// Claims wait while no binder runs at all: none of ours holds the Lease
			// kube-system/pv-controller-manager, no replica's guard sees kube-controller-manager's
			// binder running (pv_controller_upstream_binder_active, exported in shadow mode too),
			// and pods of ours exist (without them KCM's binder is on: the rollout turns it off only
			// with ours installed). The Pending count is kube-state-metrics' (a standby has no
			// caches to count them).
			Expr: fmt.Sprintf(`sum(kube_persistentvolumeclaim_status_phase{phase="Pending"}) > 0
unless on()
max(leader_election_master_status{%s, name="pv-controller-manager"}) == 1
unless on()
max(pv_controller_upstream_binder_active{%s}) == 1
unless on()
absent(%s)`, sel, sel, ourPods),
			For:         "5m",
			Severity:    "critical",
			Summary:     "Claims are Pending and no binder runs.",
			Description: "{{ $value }} PersistentVolumeClaims are Pending and for 5 minutes no binder has run: no pv-controller-manager replica holds the Lease kube-system/pv-controller-manager and none sees kube-controller-manager's binder running.",
		},
		{
			Name: "PVClaimsBindableButPending",
			// The leader knows which Pending claims it could bind now (pkg/pendingclaims): those
			// are stuck, unlike claims waiting for a provisioner or their first consumer.
			Expr:        fmt.Sprintf(`max by (reason) (pv_controller_bindable_pending_claim_max_age_seconds{%s}) > 300`, sel),
			For:         "5m",
			Severity:    "warning",
			Summary:     "Claims have stayed Pending for more than 5 minutes although a volume is there for them.",
			Description: "The oldest Pending claim that could bind now ({{ $labels.reason }}) is {{ $value | humanizeDuration }} old.",
		},
		{
			Name: "PVBindLatencyHigh",
			Expr: fmt.Sprintf(`histogram_quantile(0.99, sum by (le) (rate(pv_controller_claim_bind_duration_seconds_bucket{%s}[10m]))) > 60`, sel),
			For:  "15m",
			// A pre-bound claim created long before its volume counts from the claim's creation:
			// a workload that does that on purpose should raise the threshold.
			Severity:    "warning",
			Summary:     "The 99th percentile of claim-to-bound time is above one minute.",
			Description: "99% of claims bound in the last 10 minutes took up to {{ $value | humanizeDuration }} from creation to bound.",
		},
		{
			Name:        "PVBinderConflictsHigh",
			Expr:        fmt.Sprintf(`sum by (queue) (rate(pv_controller_sync_conflicts_total{%s}[10m])) > 1`, sel),
			For:         "15m",
			Severity:    "warning",
			Summary:     "The binder meets more than one write conflict per second.",
			Description: "The {{ $labels.queue }} queue's writes meet {{ $value | printf \"%.2f\" }} conflicts (409) per second: someone else writes the same claims or volumes (another binder?).",
		},
		{
			Name:        "PVBinderRequeuesOnErrors",
			Expr:        fmt.Sprintf(`sum by (queue, reason) (rate(pv_controller_requeues_total{%s, reason=~"error|apiserver-error"}[10m])) > 0.1`, sel),
			For:         "15m",
			Severity:    "warning",
			Summary:     "The binder retries syncs that failed.",
			Description: "The {{ $labels.queue }} queue requeues {{ $value | printf \"%.2f\" }} keys per second for {{ $labels.reason }}.",
		},
		{
			Name: "PVBinderHeldByUpstreamBinder",
			// A rollout takes minutes; a shadow replica (which never writes) is excluded.
			Expr: fmt.Sprintf(`max(pv_controller_upstream_binder_active{%s}) == 1
unless on()
max(leader_election_master_status{%s, name="pv-controller-manager-shadow"}) == 1`, sel, sel),
			For:         "30m",
			Severity:    "warning",
			Summary:     "kube-controller-manager's binder has held pv-controller-manager's writes for 30 minutes.",
			Description: "A kube-controller-manager still runs its persistentvolume-binder-controller, so pv-controller-manager holds its writes: finish the rollout or roll back.",
		},
		{
			Name: "PVBinderWorkQueueGrowing",
			Expr: fmt.Sprintf(`sum by (name) (workqueue_depth{%s, name=~"claims|volumes"}) > 500
and
sum by (name) (delta(workqueue_depth{%s, name=~"claims|volumes"}[15m])) > 0`, sel, sel),
			For:         "15m",
			Severity:    "warning",
			Summary:     "The binder's work queue holds more than 500 keys and keeps growing.",
			Description: "The {{ $labels.name }} queue holds {{ $value }} keys and has grown for 15 minutes: the binder falls behind.",
		},
		{
			Name: "PVControllerManagerClientCertificateExpiring",
			// kubeadm signs the identity's certificate for a year (pv-controller-manager-identity.sh)
			// and `kubeadm certs renew` does not know it; past its notAfter every request fails.
			Expr:        fmt.Sprintf(`min by (instance) (pv_controller_manager_client_certificate_expiration_timestamp_seconds{%s}) - time() < 21 * 24 * 3600`, sel),
			For:         "1h",
			Severity:    "warning",
			Summary:     "pv-controller-manager's client certificate expires within three weeks.",
			Description: "The client certificate of the replica {{ $labels.instance }} expires in {{ $value | humanizeDuration }}; after that the API server refuses it and that replica binds nothing. Renew it: re-run pv-controller-manager-identity.sh on its node.",
		},
		{
			Name:        "PVControllerManagerClientCertificateExpiresSoon",
			Expr:        fmt.Sprintf(`min by (instance) (pv_controller_manager_client_certificate_expiration_timestamp_seconds{%s}) - time() < 7 * 24 * 3600`, sel),
			For:         "1h",
			Severity:    "critical",
			Summary:     "pv-controller-manager's client certificate expires within a week.",
			Description: "The client certificate of the replica {{ $labels.instance }} expires in {{ $value | humanizeDuration }}; after that the API server refuses it and that replica binds nothing. Renew it now: re-run pv-controller-manager-identity.sh on its node.",
		},
		{
			Name:        "PVBinderShadowDisagrees",
			Expr:        fmt.Sprintf(`sum(increase(pv_controller_shadow_decisions_total{%s, outcome="disagree"}[1h])) > 0`, sel),
			Severity:    "warning",
			Summary:     "In shadow mode, pv-controller-manager decided differently from kube-controller-manager's binder.",
			Description: "{{ $value | printf \"%.0f\" }} claims in the last hour were bound by kube-controller-manager to a volume other than the one pv-controller-manager chose, for no reason the tracker accepts as legitimate.",
		},
	}
}
