// Package upstreambugs holds reproducers of upstream bugs that live outside the code this project
// carries (kube-scheduler's and component-helpers' volume matching), written against the upstream
// functions themselves. Each test asserts upstream's behaviour as it is today: it fails once
// upstream changes it, and docs/maintainers/upstream-bugs.md is then revisited.
package upstreambugs
