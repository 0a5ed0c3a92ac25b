// Package loadgen creates static PersistentVolume/PersistentVolumeClaim workloads against a real
// cluster and measures, by watch, how long each claim takes to become Bound. It is shared by
// `make demo`, the benchmark and the e2e suite's slow specs.
//
// Each scenario is one file behind the Scenario interface (scenario.go) that registers itself:
// prebound.go and claimref.go (pairs, in three creation orders each: pairs.go), pvcfirst.go,
// matched.go, provisioning.go (pv-load plays external-provisioner), wffc.go (kube-scheduler
// picks the node). pv-load's help and `pv-load --list`, and through it make bench's scenario
// list, come from the registry; Run writes into the Result what the benchmark report needs
// (package result). Adding a scenario is one file and its test.
//
// After binding, Verify checks that every claim and volume of the run are bound one to one, and
// the scenario what else must hold (its own volume, the volume provisioned for it).
package loadgen
