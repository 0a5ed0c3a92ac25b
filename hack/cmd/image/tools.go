//go:build tools

// crane (go-containerregistry's registry client, the version go.mod pins) pushes make image's
// tarball to a registry: make push, and make e2e-kind's local registry (hack/cluster/build-tools.sh
// crane).
package main

import _ "github.com/google/go-containerregistry/cmd/crane"
