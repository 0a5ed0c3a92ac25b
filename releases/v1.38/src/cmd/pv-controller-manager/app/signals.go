package app

import (
	"context"

	"k8s.io/apiserver/pkg/server/signals"
)

// setupSignalContext is apiserver's: the first SIGTERM/SIGINT cancels the context, a second one
// exits at once. k8s.io/apiserver v0.38 moved it to pkg/server/signals.
func setupSignalContext() context.Context {
	return signals.SetupSignalContext()
}
