package rollout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Enable turns KCM's binder off only after our pod came up; until then KCM's manifest is the
// original, and when our pod does not come up it stays so, with our manifest gone again.
func TestEnableKeepsKCMsBinderUntilOurPodIsUp(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	cases := []struct {
		name     string
		previous []byte // our manifest before Enable (an upgrade), nil for a first install
		results  []error
		wantErr  string
	}{
		{name: "comes up", results: []error{ErrNotYet, ErrNotYet, nil}},
		{name: "image cannot be pulled", results: []error{ErrNotYet, errors.New("pod kube-system/pv-controller-manager-node: ImagePullBackOff: Back-off pulling image")}, wantErr: "ImagePullBackOff"},
		{name: "never answers", results: []error{ErrNotYet}, wantErr: "not up after"},
		{name: "upgrade that fails", previous: bytes.Replace(ourManifest, []byte(":dev"), []byte(":old"), 1),
			results: []error{errors.New("pod kube-system/pv-controller-manager-node: CrashLoopBackOff: back-off restarting")}, wantErr: "CrashLoopBackOff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newNode(t, original)
			kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
			ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
			if tc.previous != nil {
				if err := os.WriteFile(ourPath, tc.previous, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			o.Check = func(ctx context.Context, image string) error {
				if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
					t.Errorf("KCM's manifest changed before our pod was up")
				}
				if got := readFile(t, ourPath); !bytes.Equal(got, ourManifest) {
					t.Errorf("waiting for a pod whose manifest is not installed")
				}
				if image != "pv-controller-manager.local/pv-controller-manager:dev" {
					t.Errorf("waiting for image %q", image)
				}
				r := tc.results[min(calls, len(tc.results)-1)]
				calls++
				return r
			}
			o.WaitTimeout, o.WaitInterval = 200*time.Millisecond, time.Millisecond
			err := Enable(o)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Enable: %v", err)
				}
				if got := readFile(t, kcmPath); !bytes.Equal(got, readFile(t, "testdata/kubeadm.disabled.golden")) {
					t.Errorf("KCM's binder not turned off once our pod was up")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Enable: %v, want an error naming %q", err, tc.wantErr)
			}
			if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
				t.Errorf("KCM's manifest changed although our pod did not come up")
			}
			if _, err := os.Stat(filepath.Join(o.BackupDir, KCMManifestName)); err == nil {
				t.Errorf("a backup was written although KCM was not edited")
			}
			got, rerr := os.ReadFile(ourPath)
			switch {
			case tc.previous == nil && rerr == nil:
				t.Errorf("our manifest left installed after a failed first install")
			case tc.previous != nil && !bytes.Equal(got, tc.previous):
				t.Errorf("the previous manifest of an upgrade not put back: %s", got)
			}
		})
	}
}

// Bad input changes nothing and says what is wrong.
func TestEnableRefusesBadInput(t *testing.T) {
	placeholder := bytes.Replace(ourManifest, []byte("pv-controller-manager.local/pv-controller-manager:dev"), []byte(ImagePlaceholder), 1)
	cases := []struct {
		name       string
		manifest   []byte
		image      string
		kubeconfig string
		wantErr    string
	}{
		{name: "no image", manifest: placeholder, wantErr: "no image: pass --image"},
		{name: "not an image reference", manifest: placeholder, image: "Registry.Example/PV:v1", wantErr: "image \"Registry.Example/PV:v1\""},
		{name: "kubeconfig missing", manifest: ourManifest, kubeconfig: "/nonexistent/pv-controller-manager.conf", wantErr: "our pod's kubeconfig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			original := readFile(t, "testdata/kubeadm.yaml")
			o := newNode(t, original)
			o.OurManifest, o.Image, o.KubeconfigPath = tc.manifest, tc.image, tc.kubeconfig
			err := Enable(o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Enable: %v, want %q", err, tc.wantErr)
			}
			entries, _ := os.ReadDir(o.ManifestsDir)
			if len(entries) != 1 || !bytes.Equal(readFile(t, filepath.Join(o.ManifestsDir, KCMManifestName)), original) {
				t.Errorf("bad input changed the node: %d files", len(entries))
			}
		})
	}
}

func mirrorPod(image string, status v1.ContainerStatus) *v1.Pod {
	status.Name = "pv-controller-manager"
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "pv-controller-manager-node-1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "pv-controller-manager", Image: image}}},
		Status:     v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{status}},
	}
}

func TestStaticPodCheck(t *testing.T) {
	healthz := http.StatusOK
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(healthz)
		fmt.Fprint(w, "ok")
	}))
	defer server.Close()
	const image = "registry.example/pv-controller-manager:v0.1.0"
	running := v1.ContainerStatus{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	cases := []struct {
		name    string
		pod     *v1.Pod
		healthz int
		want    string // "" passes; "not yet" is ErrNotYet; else the fatal error contains it
	}{
		{name: "no mirror pod yet", want: "not yet"},
		{name: "old image still running", pod: mirrorPod("registry.example/pv-controller-manager:v0.0.9", running), want: "not yet"},
		{name: "pulling", pod: mirrorPod(image, v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}), want: "not yet"},
		{name: "image cannot be pulled", pod: mirrorPod(image, v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}), want: "ImagePullBackOff: Back-off pulling image"},
		{name: "crash loop", pod: mirrorPod(image, v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}), want: "its last log lines"},
		{name: "running, not answering", pod: mirrorPod(image, running), healthz: http.StatusInternalServerError, want: "not yet"},
		{name: "up", pod: mirrorPod(image, running), healthz: http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.pod != nil {
				client = fake.NewClientset(tc.pod)
			}
			healthz = tc.healthz
			c := &StaticPodCheck{Client: client, Namespace: "kube-system", PodName: "pv-controller-manager", NodeName: "node-1",
				HealthURL: server.URL + "/healthz", HTTP: server.Client()}
			err := c.Check(context.Background(), image)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v, want it up", err)
			case tc.want == "not yet" && !errors.Is(err, ErrNotYet):
				t.Errorf("Check: %v, want not yet", err)
			case tc.want != "" && tc.want != "not yet" && (err == nil || errors.Is(err, ErrNotYet) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check: %v, want a final error containing %q", err, tc.want)
			}
		})
	}
}

func TestManifestKubeconfig(t *testing.T) {
	got, err := ManifestKubeconfig(readFile(t, "../../deploy/static-pod/pv-controller-manager.yaml"))
	if err != nil || got != "/etc/kubernetes/pv-controller-manager.conf" {
		t.Errorf("ManifestKubeconfig(shipped manifest) = %q, %v; want /etc/kubernetes/pv-controller-manager.conf", got, err)
	}
	if got, err := ManifestKubeconfig(ourManifest); err != nil || got != "" {
		t.Errorf("a manifest without the volume: %q, %v", got, err)
	}
}
