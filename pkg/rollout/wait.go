package rollout

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
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

// PodCheck looks once at a static pod on this node. It returns nil when the pod runs the given
// image and answers its health check, ErrNotYet (wrapped, with what it saw) while it may still
// come up, and any other error when it cannot: the error names the cause.
type PodCheck func(ctx context.Context, image string) error

// waitFor polls check every interval until it passes, fails for good, or timeout ends.
func waitFor(ctx context.Context, check PodCheck, image string, timeout, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		last = check(ctx, image)
		if last == nil || !errors.Is(last, ErrNotYet) {
			return last
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not up after %s: %w", timeout, last)
		case <-time.After(interval):
		}
	}
}

// StaticPodCheck checks a static pod through its mirror pod (namespace/name-node on the API
// server) and a local health URL. The mirror pod tells which image runs and why a container
// does not (an image it cannot pull, a crash loop with its last log lines); the health URL, that
// the new container serves, not the old one that is still being replaced.
type StaticPodCheck struct {
	Client    kubernetes.Interface
	Namespace string
	PodName   string // the manifest's metadata.name; the mirror pod is PodName-NodeName
	NodeName  string
	HealthURL string // e.g. https://127.0.0.1:10267/healthz (self-signed: not verified)
	HTTP      *http.Client
}

// fatalWaiting are the waiting reasons after which a container will not start without a change
// to its manifest, its image or the node.
var fatalWaiting = map[string]bool{
	"ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "CrashLoopBackOff": true,
}

// Check implements PodCheck.
func (c *StaticPodCheck) Check(ctx context.Context, image string) error {
	name := c.PodName + "-" + c.NodeName
	pod, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: no pod %s/%s yet (the kubelet has not started it)", ErrNotYet, c.Namespace, name)
	}
	if err != nil {
		return fmt.Errorf("%w: reading pod %s/%s: %v", ErrNotYet, c.Namespace, name, err)
	}
	if len(pod.Spec.Containers) == 0 || pod.Spec.Containers[0].Image != image {
		return fmt.Errorf("%w: pod %s/%s does not run %s yet", ErrNotYet, c.Namespace, name, image)
	}
	var status *v1.ContainerStatus
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == pod.Spec.Containers[0].Name {
			status = &pod.Status.ContainerStatuses[i]
		}
	}
	if status == nil {
		return fmt.Errorf("%w: pod %s/%s has no container status yet", ErrNotYet, c.Namespace, name)
	}
	if w := status.State.Waiting; w != nil {
		if fatalWaiting[w.Reason] {
			return fmt.Errorf("pod %s/%s: %s: %s%s", c.Namespace, name, w.Reason, w.Message, c.lastLog(ctx, pod, w.Reason))
		}
		return fmt.Errorf("%w: pod %s/%s waiting: %s %s", ErrNotYet, c.Namespace, name, w.Reason, w.Message)
	}
	if status.State.Running == nil || !ptr.Deref(status.Started, true) {
		return fmt.Errorf("%w: pod %s/%s: container not running", ErrNotYet, c.Namespace, name)
	}
	return c.healthy(ctx)
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
		return fmt.Errorf("%w: %s answered %s", ErrNotYet, c.HealthURL, resp.Status)
	}
	return nil
}

// lastLog returns the last lines the crashing container wrote, for the error.
func (c *StaticPodCheck) lastLog(ctx context.Context, pod *v1.Pod, reason string) string {
	if reason != "CrashLoopBackOff" {
		return ""
	}
	data, err := c.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &v1.PodLogOptions{
		Container: pod.Spec.Containers[0].Name, Previous: true, TailLines: ptr.To[int64](20),
	}).DoRaw(ctx)
	if err != nil || len(data) == 0 {
		return ""
	}
	return "\nits last log lines:\n  " + strings.ReplaceAll(strings.TrimRight(string(data), "\n"), "\n", "\n  ")
}
