package main

import "fmt"

// The dashboard in Grafana's JSON model (schemaVersion 39, timeseries and stat panels), written
// from these few types rather than grafonnet: grafonnet is fetched from GitHub, which this
// project's builds do not reach, and the panels are plain enough not to need it.

type dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	Description   string      `json:"description"`
	Tags          []string    `json:"tags"`
	Editable      bool        `json:"editable"`
	SchemaVersion int         `json:"schemaVersion"`
	Time          timeRange   `json:"time"`
	Refresh       string      `json:"refresh"`
	Templating    templating  `json:"templating"`
	Panels        []panel     `json:"panels"`
	Annotations   annotations `json:"annotations"`
}

type timeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type templating struct {
	List []variable `json:"list"`
}

type variable struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	Type    string `json:"type"`
	Query   string `json:"query"`
	Current struct {
	} `json:"current"`
}

type annotations struct {
	List []any `json:"list"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

var prometheusDatasource = datasourceRef{Type: "prometheus", UID: "${datasource}"}

type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

type target struct {
	Datasource   datasourceRef `json:"datasource"`
	Expr         string        `json:"expr"`
	LegendFormat string        `json:"legendFormat"`
	RefID        string        `json:"refId"`
}

type fieldConfig struct {
	Defaults struct {
		Unit string `json:"unit"`
		Min  *int   `json:"min,omitempty"`
	} `json:"defaults"`
	Overrides []any `json:"overrides"`
}

type panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	GridPos     gridPos        `json:"gridPos"`
	Datasource  *datasourceRef `json:"datasource,omitempty"`
	Targets     []target       `json:"targets,omitempty"`
	FieldConfig *fieldConfig   `json:"fieldConfig,omitempty"`
	Collapsed   *bool          `json:"collapsed,omitempty"`
	Panels      []panel        `json:"panels,omitempty"`
}

// series is one query of a panel and its legend.
type series struct{ expr, legend string }

// layout places panels on Grafana's 24-column grid: rows, then panels of width w in each.
type layout struct {
	panels []panel
	nextID int
	x, y   int
}

func (l *layout) row(title string) {
	if l.x != 0 {
		l.x, l.y = 0, l.y+8
	}
	l.nextID++
	collapsed := false
	l.panels = append(l.panels, panel{ID: l.nextID, Type: "row", Title: title, Collapsed: &collapsed,
		GridPos: gridPos{H: 1, W: 24, X: 0, Y: l.y}})
	l.y++
}

func (l *layout) add(kind, title, description, unit string, w int, queries ...series) {
	if l.x+w > 24 {
		l.x, l.y = 0, l.y+8
	}
	l.nextID++
	p := panel{ID: l.nextID, Type: kind, Title: title, Description: description, Datasource: &prometheusDatasource,
		GridPos: gridPos{H: 8, W: w, X: l.x, Y: l.y}, FieldConfig: &fieldConfig{Overrides: []any{}}}
	p.FieldConfig.Defaults.Unit = unit
	zero := 0
	p.FieldConfig.Defaults.Min = &zero
	for i, q := range queries {
		p.Targets = append(p.Targets, target{Datasource: prometheusDatasource, Expr: q.expr, LegendFormat: q.legend,
			RefID: string(rune('A' + i))})
	}
	l.panels = append(l.panels, p)
	l.x += w
}

func newDashboard(sel string) dashboard {
	var l layout
	q := func(format string) string { return fmt.Sprintf(format, sel) }

	l.row("Binding")
	l.add("timeseries", "Binds per second", "Claims bound per second, by how the binder found the volume: prebound (named by the claim or the volume) or matched.", "ops", 8,
		series{q(`sum by (path) (rate(pv_controller_claim_bind_duration_seconds_count{%s}[$__rate_interval]))`), "{{path}}"})
	l.add("timeseries", "Claim created to bound", "Quantiles of the time from a claim's creation to its bind.", "s", 8,
		series{q(`histogram_quantile(0.5, sum by (le, path) (rate(pv_controller_claim_bind_duration_seconds_bucket{%s}[$__rate_interval])))`), "p50 {{path}}"},
		series{q(`histogram_quantile(0.99, sum by (le, path) (rate(pv_controller_claim_bind_duration_seconds_bucket{%s}[$__rate_interval])))`), "p99 {{path}}"})
	l.add("timeseries", "CPU per bind", "CPU seconds of all replicas per claim bound.", "s", 8,
		series{q(`sum(rate(process_cpu_seconds_total{%[1]s}[$__rate_interval])) / sum(rate(pv_controller_claim_bind_duration_seconds_count{%[1]s}[$__rate_interval]))`), "CPU s / bind"})
	l.add("timeseries", "Claims and volumes", "The leader's count of bound and unbound claims and volumes.", "short", 12,
		series{q(`sum(pv_collector_unbound_pvc_count{%s})`), "unbound claims"},
		series{q(`sum(pv_collector_bound_pvc_count{%s})`), "bound claims"},
		series{q(`sum(pv_collector_unbound_pv_count{%s})`), "unbound volumes"},
		series{q(`sum(pv_collector_bound_pv_count{%s})`), "bound volumes"})
	l.add("timeseries", "Pending claims that could bind now", "Claims Pending for more than a minute although a volume is there for them (pkg/pendingclaims): count and age of the oldest. Alert: PVClaimsBindableButPending.", "short", 12,
		series{q(`max by (reason) (pv_controller_bindable_pending_claims{%s})`), "{{reason}}"},
		series{q(`max by (reason) (pv_controller_bindable_pending_claim_max_age_seconds{%s}) / 60`), "oldest {{reason}} (minutes)"})

	l.row("Work")
	l.add("timeseries", "Requeues by reason", "Keys put back on the queues: error and apiserver-error are failed syncs; the others are the binder's own wake-ups.", "ops", 8,
		series{q(`sum by (queue, reason) (rate(pv_controller_requeues_total{%s}[$__rate_interval]))`), "{{queue}} {{reason}}"})
	l.add("timeseries", "Write conflicts", "409s the binder met and retried at once. Alert: PVBinderConflictsHigh.", "ops", 8,
		series{q(`sum by (queue) (rate(pv_controller_sync_conflicts_total{%s}[$__rate_interval]))`), "{{queue}}"})
	l.add("timeseries", "Queue depth", "Keys waiting in the claims and volumes queues. Alert: PVBinderWorkQueueGrowing.", "short", 8,
		series{q(`sum by (name) (workqueue_depth{%s, name=~"claims|volumes"})`), "{{name}}"})
	l.add("timeseries", "Queue adds", "", "ops", 12,
		series{q(`sum by (name) (rate(workqueue_adds_total{%s, name=~"claims|volumes"}[$__rate_interval]))`), "{{name}}"})
	l.add("timeseries", "Time in queue, p99", "", "s", 12,
		series{q(`histogram_quantile(0.99, sum by (le, name) (rate(workqueue_queue_duration_seconds_bucket{%s, name=~"claims|volumes"}[$__rate_interval])))`), "{{name}}"})

	l.row("API server")
	l.add("timeseries", "Requests by method and code", "All of the binder's requests; a bind is 4 writes.", "reqps", 8,
		series{q(`sum by (method, code) (rate(rest_client_requests_total{%s}[$__rate_interval]))`), "{{method}} {{code}}"})
	l.add("timeseries", "Request latency, p99", "", "s", 8,
		series{q(`histogram_quantile(0.99, sum by (le, verb) (rate(rest_client_request_duration_seconds_bucket{%s}[$__rate_interval])))`), "{{verb}}"})
	l.add("timeseries", "Client rate limiter wait, p99", "Time requests waited for --kube-api-qps/--kube-api-burst.", "s", 8,
		series{q(`histogram_quantile(0.99, sum by (le, verb) (rate(rest_client_rate_limiter_duration_seconds_bucket{%s}[$__rate_interval])))`), "{{verb}}"})

	l.row("Replicas")
	l.add("timeseries", "Leader", "1 for the replica holding the Lease (pv-controller-manager, or pv-controller-manager-shadow in shadow mode).", "short", 8,
		series{q(`max by (instance, name) (leader_election_master_status{%s})`), "{{instance}} {{name}}"})
	l.add("timeseries", "Held by kube-controller-manager's binder", "1 while a kube-controller-manager still runs its binder and ours holds its writes. Alert: PVBinderHeldByUpstreamBinder.", "short", 8,
		series{q(`max by (instance) (pv_controller_upstream_binder_active{%s})`), "{{instance}}"})
	l.add("timeseries", "Shadow decisions", "Shadow mode only: ours' decisions compared with kube-controller-manager's binder (docs/operators/shadow.md).", "short", 8,
		series{q(`sum by (outcome) (increase(pv_controller_shadow_decisions_total{%s}[$__rate_interval]))`), "{{outcome}}"})
	l.add("timeseries", "CPU", "", "percentunit", 8,
		series{q(`sum by (instance) (rate(process_cpu_seconds_total{%s}[$__rate_interval]))`), "{{instance}}"})
	l.add("timeseries", "Resident memory", "", "bytes", 8,
		series{q(`sum by (instance) (process_resident_memory_bytes{%s})`), "{{instance}}"})
	l.add("timeseries", "Goroutines", "", "short", 8,
		series{q(`sum by (instance) (go_goroutines{%s})`), "{{instance}}"})

	return dashboard{
		UID:           "pv-controller-manager",
		Title:         "pv-controller-manager",
		Description:   "The PersistentVolume binder that replaces kube-controller-manager's (generated by hack/monitoring; do not edit).",
		Tags:          []string{"kubernetes", "storage", "pv-controller-manager"},
		SchemaVersion: 39,
		Time:          timeRange{From: "now-1h", To: "now"},
		Refresh:       "30s",
		Templating: templating{List: []variable{{Name: "datasource", Label: "Data source", Type: "datasource",
			Query: "prometheus"}}},
		Panels:      l.panels,
		Annotations: annotations{List: []any{}},
	}
}
