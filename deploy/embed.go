// Package deploy holds the manifests operators install: the static pod (static-pod/) and RBAC
// (rbac/). They are embedded so that pv-rollout installs the same bytes and tests can check them.
package deploy

import "embed"

// StaticPodManifest is static-pod/pv-controller-manager.yaml.
//
//go:embed static-pod/pv-controller-manager.yaml
var StaticPodManifest []byte

// RBAC holds rbac/*.yaml.
//
//go:embed rbac/*.yaml
var RBAC embed.FS
