package app

import (
	"context"

	"k8s.io/apiserver/pkg/server"
)

// setupSignalContext is apiserver's: the first SIGTERM/SIGINT cancels the context, a second one
// exits at once. Its own file because v1.38 moved it (releases/v1.38/src/ has that line's copy).
func setupSignalContext() context.Context {
	return server.SetupSignalContext()
}
