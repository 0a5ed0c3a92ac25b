// Package faultproxy is a fault-injecting HTTP proxy between a Kubernetes client (a binder) and the
// apiserver, for the cluster torture (docs/maintainers/torture.md). The client talks plain HTTP to
// the proxy; the proxy forwards with the credentials of its own kubeconfig, so the apiserver sees
// the client's user agent and the proxy's identity.
//
// Faults, each with its own probability: a request refused with 500 or 503 (it never reaches the
// apiserver), 429 with Retry-After, a connection reset before forwarding, a write forwarded and
// applied whose answer is lost (the client sees its connection reset: it cannot know the outcome),
// a watch cut after a random time (the reflector re-watches), and a watch answered 410 Gone (the
// reflector relists). An outage refuses every write until it ends. Counts per fault are kept for
// the report.
package faultproxy
