// Package app is the command line of `kubectl pvc-why` (cmd/kubectl-pvc_why), in kubectl's
// shape: Options{Complete, Validate, Run}. The analysis it runs is package explain.
package app
