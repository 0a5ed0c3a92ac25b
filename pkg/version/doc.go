// Package version holds the build version of pv-controller-manager, stamped by the Makefile
// through -ldflags, and the upstream Kubernetes release its controller is taken from.
package version
