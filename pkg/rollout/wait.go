package rollout

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ErrNotYet is what a PodCheck returns while the pod may still come up.
var ErrNotYet = errors.New("not up yet")

// Want is what a PodCheck waits for: the pod of the manifest just written, running and healthy.
type Want struct {
	Image        string // the container's image ("": any)
	Stamp        string // the value of the manifest's StampAnnotation ("": not checked)
	CommandLacks string // an argument the container's command must not have any more ("": none)
	CommandHas   string // an argument the container's command must have ("": none)
}

// PodCheck looks once at a static pod on this node. It returns nil when the pod is what want
// says and answers its health check, ErrNotYet (wrapped, with what it saw) while it may still
// come up, and any other error when it cannot: the error names the cause.
type PodCheck func(ctx context.Context, want Want) error

// waitFor polls check every interval until it has passed at every poll for settle (once, when
// settle is 0), fails for good, or timeout ends. A pass followed by ErrNotYet starts the settle
// window again: a pod that answers once and crashes a second later has not come up. now measures
// the settle window (time.Now; tests pass a clock that their check advances).
func waitFor(ctx context.Context, check PodCheck, want Want, timeout, interval, settle time.Duration, now func() time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	var passing time.Time // since when every poll passed; zero while it does not
	for {
		last = check(ctx, want)
		switch {
		case last == nil:
			if passing.IsZero() {
				passing = now()
			}
			if now().Sub(passing) >= settle {
				return nil
			}
		case errors.Is(last, ErrNotYet):
			passing = time.Time{}
		default:
			return last
		}
		select {
		case <-ctx.Done():
			if last == nil {
				return fmt.Errorf("passing for %s only, not the %s asked, after %s", now().Sub(passing).Round(time.Second), settle, timeout)
			}
			return fmt.Errorf("not up after %s: %w", timeout, last)
		case <-time.After(interval):
		}
	}
}

// StaticPodCheck checks a static pod through its mirror pod (namespace/name-node on the API
// server) and a local health URL. The mirror pod tells which manifest runs (its stamp: the old
// pod, still being replaced, answers /healthz too) and why a container does not start (an image
// it cannot pull, a crash loop with its last log lines); the health URL, that the new one serves.
type StaticPodCheck struct {
	Client    kubernetes.Interface
	Namespace string
	PodName   string // the manifest's metadata.name; the mirror pod is PodName-NodeName
	NodeName  string
	HealthURL string // e.g. https://127.0.0.1:10267/healthz (self-signed: not verified)
	HTTP      *http.Client
	// Persist is how long a waiting reason that a retry may clear (a pull that failed, a
	// container that could not be created) must last before it ends the wait; 30 s when 0.
	Persist time.Duration
	Now     func() time.Time // for tests; time.Now when nil

	since map[string]time.Time // when each such reason was first seen in a row
}

// immediatelyFatal are waiting reasons that no retry clears; retriedReasons clear when a retry
// succeeds (a registry back, a name in use by the container being replaced) and end the wait only
// when they persist. A crash loop ends it after the second restart.
var (
	immediatelyFatal = map[string]bool{"InvalidImageName": true, "ErrImageNeverPull": true}
	retriedReasons   = map[string]string{"ErrImagePull": "pull", "ImagePullBackOff": "pull", "CreateContainerConfigError": "create", "CreateContainerError": "create"}
)

// Check implements PodCheck.
func (c *StaticPodCheck) Check(ctx context.Context, want Want) error {
	name := c.PodName + "-" + c.NodeName
	pod, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: no pod %s/%s yet (the kubelet has not started it; is %q this node's name? --node-name)", ErrNotYet, c.Namespace, name, c.NodeName)
	}
	if err != nil {
		return fmt.Errorf("%w: reading pod %s/%s: %v", ErrNotYet, c.Namespace, name, err)
	}
	if len(pod.Spec.Containers) == 0 {
		return fmt.Errorf("%w: pod %s/%s has no container", ErrNotYet, c.Namespace, name)
	}
	container := pod.Spec.Containers[0]
	switch {
	case want.Stamp != "" && pod.Annotations[StampAnnotation] != want.Stamp:
		return fmt.Errorf("%w: pod %s/%s is not the new manifest's yet", ErrNotYet, c.Namespace, name)
	case want.Image != "" && container.Image != want.Image:
		return fmt.Errorf("%w: pod %s/%s does not run %s yet", ErrNotYet, c.Namespace, name, want.Image)
	case want.CommandLacks != "" && strings.Contains(strings.Join(append(container.Command, container.Args...), " "), want.CommandLacks):
		return fmt.Errorf("%w: pod %s/%s still has %s", ErrNotYet, c.Namespace, name, want.CommandLacks)
	case want.CommandHas != "" && !strings.Contains(strings.Join(append(container.Command, container.Args...), " "), want.CommandHas):
		return fmt.Errorf("%w: pod %s/%s does not have %s yet", ErrNotYet, c.Namespace, name, want.CommandHas)
	}
	var status *v1.ContainerStatus
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == container.Name {
			status = &pod.Status.ContainerStatuses[i]
		}
	}
	if status == nil {
		return fmt.Errorf("%w: pod %s/%s has no container status yet", ErrNotYet, c.Namespace, name)
	}
	if w := status.State.Waiting; w != nil {
		if err := c.waiting(ctx, pod, status, w); err != nil {
			return err
		}
		return fmt.Errorf("%w: pod %s/%s waiting: %s %s", ErrNotYet, c.Namespace, name, w.Reason, w.Message)
	}
	c.since = nil
	if status.State.Running == nil || !ptr.Deref(status.Started, true) {
		return fmt.Errorf("%w: pod %s/%s: container not running", ErrNotYet, c.Namespace, name)
	}
	return c.healthy(ctx)
}

// waiting returns the error that ends the wait for a container in w, nil while it may start.
func (c *StaticPodCheck) waiting(ctx context.Context, pod *v1.Pod, status *v1.ContainerStatus, w *v1.ContainerStateWaiting) error {
	id := pod.Namespace + "/" + pod.Name
	switch {
	case immediatelyFatal[w.Reason]:
		return fmt.Errorf("pod %s: %s: %s", id, w.Reason, w.Message)
	case w.Reason == "CrashLoopBackOff" && status.RestartCount >= 2:
		return fmt.Errorf("pod %s: CrashLoopBackOff after %d restarts: %s%s", id, status.RestartCount, w.Message, c.lastLog(ctx, pod))
	}
	class, retried := retriedReasons[w.Reason]
	if !retried {
		c.since = nil
		return nil
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if c.since == nil {
		c.since = map[string]time.Time{}
	}
	first, seen := c.since[class]
	if !seen {
		c.since = map[string]time.Time{class: now()}
		return nil
	}
	persist := c.Persist
	if persist <= 0 {
		persist = 30 * time.Second
	}
	if now().Sub(first) >= persist {
		return fmt.Errorf("pod %s: %s for %s: %s", id, w.Reason, now().Sub(first).Round(time.Second), w.Message)
	}
	return nil
}

// healthy asks the health URL; the mirror pod has already said that the new image runs.
func (c *StaticPodCheck) healthy(ctx context.Context) error {
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.HealthURL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotYet, c.HealthURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// /readyz lists its checks, a failed one as "[-]name failed: ...": name those.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
		var failed []string
		for line := range strings.SplitSeq(string(body), "\n") {
			if name, ok := strings.CutPrefix(line, "[-]"); ok {
				name, _, _ = strings.Cut(name, " ")
				failed = append(failed, name)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w: %s answered %s, failing %s", ErrNotYet, c.HealthURL, resp.Status, strings.Join(failed, ", "))
		}
		return fmt.Errorf("%w: %s answered %s", ErrNotYet, c.HealthURL, resp.Status)
	}
	return nil
}

// lastLog returns the last lines the crashing container wrote, for the error.
func (c *StaticPodCheck) lastLog(ctx context.Context, pod *v1.Pod) string {
	data, err := c.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &v1.PodLogOptions{
		Container: pod.Spec.Containers[0].Name, Previous: true, TailLines: ptr.To[int64](20),
	}).DoRaw(ctx)
	if err != nil || len(data) == 0 {
		return ""
	}
	return "\nits last log lines:\n  " + strings.ReplaceAll(strings.TrimRight(string(data), "\n"), "\n", "\n  ")
}
