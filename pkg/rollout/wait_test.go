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
	"sigs.k8s.io/yaml"
)

// Enable turns KCM's binder off only after our pod came up; until then KCM's manifest is the
// original, and when our pod does not come up it stays so, with our manifest gone again.
func TestEnableKeepsKCMsBinderUntilOurPodIsUp(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	cases := []struct {
		name     string
		previous []byte // our manifest before Enable (an upgrade), nil for a first install
		results  []error
		runsOut  bool // only the timeout ends the wait: a short one decides nothing
		wantErr  string
	}{
		{name: "comes up", results: []error{ErrNotYet, ErrNotYet, nil}},
		{name: "image cannot be pulled", results: []error{ErrNotYet, errors.New("pod kube-system/pv-controller-manager-node: ImagePullBackOff: Back-off pulling image")}, wantErr: "ImagePullBackOff"},
		{name: "never answers", results: []error{ErrNotYet}, runsOut: true, wantErr: "not up after"},
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
			installed, stamp, err := Stamp(ourManifest)
			if err != nil {
				t.Fatal(err)
			}
			o.Check = func(ctx context.Context, want Want) error {
				if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
					t.Errorf("KCM's manifest changed before our pod was up")
				}
				if got := readFile(t, ourPath); !bytes.Equal(got, installed) {
					t.Errorf("waiting for a pod whose manifest is not installed")
				}
				if want.Image != "pv-controller-manager.local/pv-controller-manager:dev" || want.Stamp != stamp {
					t.Errorf("waiting for %+v, want the image and stamp %s", want, stamp)
				}
				r := tc.results[min(calls, len(tc.results)-1)]
				calls++
				return r
			}
			// A wait that ends on a poll's result gets all the time it may need for its polls.
			o.WaitTimeout, o.WaitInterval = 30*time.Second, time.Millisecond
			if tc.runsOut {
				o.WaitTimeout = 200 * time.Millisecond
			}
			err = Enable(o)
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
		if healthz != http.StatusOK {
			// What /readyz answers while this replica's identity cannot list anything.
			fmt.Fprint(w, "[+]ping ok\n[+]shutdown ok\n[-]binder-caches failed: reason withheld\n[-]api-access failed: reason withheld\nreadyz check failed\n")
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer server.Close()
	const image = "registry.example/pv-controller-manager:v0.1.0"
	want := Want{Image: image, Stamp: "new"}
	running := v1.ContainerStatus{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	waiting := func(reason string, restarts int32) v1.ContainerStatus {
		return v1.ContainerStatus{RestartCount: restarts, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: "msg"}}}
	}
	stampedPod := func(stamp, image string, status v1.ContainerStatus) *v1.Pod {
		pod := mirrorPod(image, status)
		pod.Annotations = map[string]string{StampAnnotation: stamp}
		return pod
	}
	cases := []struct {
		name    string
		pod     *v1.Pod
		healthz int
		later   time.Duration // a second look this much later
		want    string        // "" passes; "not yet" is ErrNotYet; else the final error contains it
	}{
		{name: "no mirror pod yet", want: "not yet"},
		{name: "old pod, same image (a shadow being replaced)", pod: stampedPod("old", image, running), want: "not yet"},
		{name: "old image still running", pod: stampedPod("new", "registry.example/pv-controller-manager:v0.0.9", running), want: "not yet"},
		{name: "being created", pod: stampedPod("new", image, waiting("ContainerCreating", 0)), want: "not yet"},
		{name: "a pull failed once", pod: stampedPod("new", image, waiting("ImagePullBackOff", 0)), later: time.Second, want: "not yet"},
		{name: "pulls keep failing", pod: stampedPod("new", image, waiting("ImagePullBackOff", 0)), later: time.Minute, want: "ImagePullBackOff for 1m0s: msg"},
		{name: "not an image name", pod: stampedPod("new", image, waiting("InvalidImageName", 0)), want: "InvalidImageName: msg"},
		{name: "first crash", pod: stampedPod("new", image, waiting("CrashLoopBackOff", 1)), want: "not yet"},
		{name: "crash loop", pod: stampedPod("new", image, waiting("CrashLoopBackOff", 2)), want: "its last log lines"},
		{name: "running, not answering", pod: stampedPod("new", image, running), healthz: http.StatusInternalServerError, want: "not yet"},
		{name: "up", pod: stampedPod("new", image, running), healthz: http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.pod != nil {
				client = fake.NewClientset(tc.pod)
			}
			healthz = tc.healthz
			now := time.Unix(1000, 0)
			c := &StaticPodCheck{Client: client, Namespace: "kube-system", PodName: "pv-controller-manager", NodeName: "node-1",
				HealthURL: server.URL + "/healthz", HTTP: server.Client(), Now: func() time.Time { return now }}
			err := c.Check(context.Background(), want)
			if tc.later > 0 {
				if !errors.Is(err, ErrNotYet) {
					t.Fatalf("first look: %v, want not yet", err)
				}
				now = now.Add(tc.later)
				err = c.Check(context.Background(), want)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v, want it up", err)
			case tc.want == "not yet" && !errors.Is(err, ErrNotYet):
				t.Errorf("Check: %v, want not yet", err)
			case tc.healthz == http.StatusInternalServerError && !strings.Contains(err.Error(), "failing binder-caches, api-access"):
				t.Errorf("Check: %v, want it to name the failing checks", err)
			case tc.want != "" && tc.want != "not yet" && (err == nil || errors.Is(err, ErrNotYet) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check: %v, want a final error containing %q", err, tc.want)
			}
		})
	}
}

func TestManifestInfo(t *testing.T) {
	name, kubeconfig, err := ManifestInfo(readFile(t, "../../deploy/static-pod/pv-controller-manager.yaml"))
	if err != nil || name != "pv-controller-manager" || kubeconfig != "/etc/kubernetes/pv-controller-manager.conf" {
		t.Errorf("ManifestInfo(shipped manifest) = %q, %q, %v; want pv-controller-manager, /etc/kubernetes/pv-controller-manager.conf", name, kubeconfig, err)
	}
	if _, kubeconfig, err := ManifestInfo(ourManifest); err != nil || kubeconfig != "" {
		t.Errorf("a manifest without the volume: %q, %v", kubeconfig, err)
	}
}

// The stamp tells the manifests apart (shadow and binding differ by one flag, same image), is
// the same for the same content, and survives a re-stamp.
func TestStamp(t *testing.T) {
	shipped := readFile(t, "../../deploy/static-pod/pv-controller-manager.yaml")
	a, digestA, err := Stamp(shipped)
	if err != nil {
		t.Fatal(err)
	}
	again, digestAgain, err := Stamp(a)
	if err != nil || !bytes.Equal(again, a) || digestAgain != digestA {
		t.Errorf("re-stamping changed the manifest or its digest")
	}
	shadow, err := AddFlag(shipped, ShadowFlag)
	if err != nil {
		t.Fatal(err)
	}
	if _, digestB, _ := Stamp(shadow); digestB == digestA {
		t.Errorf("the shadow manifest has the binding manifest's digest")
	}
	name, _, err := ManifestInfo(a)
	if err != nil || name != "pv-controller-manager" {
		t.Errorf("the stamped manifest does not parse: %v", err)
	}
	if !strings.Contains(string(a), "  annotations:\n    "+StampAnnotation+": \""+digestA+"\"\n") {
		t.Errorf("no stamp annotation in:\n%s", a)
	}
	// A manifest with annotations of its own keeps them; unstamped, it is the operator's again.
	own := bytes.Replace(shipped, []byte("metadata:\n"), []byte("metadata:\n  annotations:\n    example.com/owner: storage-team\n"), 1)
	c, _, err := Stamp(own)
	if err != nil {
		t.Fatal(err)
	}
	var pod v1.Pod
	if err := yaml.Unmarshal(c, &pod); err != nil || pod.Annotations["example.com/owner"] != "storage-team" || pod.Annotations[StampAnnotation] == "" {
		t.Errorf("stamping a manifest with annotations: %v, annotations %v", err, pod.Annotations)
	}
	if !bytes.Equal(unstamp(c), own) || !bytes.Equal(unstamp(a), shipped) {
		t.Errorf("unstamp does not give the manifest back")
	}
	if _, _, err := Stamp(bytes.Replace(shipped, []byte("metadata:\n"), []byte("metadata:\n  annotations: {a: b}\n"), 1)); err == nil {
		t.Errorf("a flow mapping of annotations: want a clear error")
	}
}

// Disable removes our pod only once KCM runs its binder again; if KCM does not come back, ours
// stays so that a binder runs.
func TestDisableRemovesOursOnlyOnceKCMBindsAgain(t *testing.T) {
	original := readFile(t, "testdata/kubeadm.yaml")
	for _, kcmUp := range []bool{true, false} {
		o := newNode(t, original)
		o.WaitTimeout, o.WaitInterval = 100*time.Millisecond, time.Millisecond
		if err := Enable(o); err != nil {
			t.Fatal(err)
		}
		kcmPath := filepath.Join(o.ManifestsDir, KCMManifestName)
		ourPath := filepath.Join(o.ManifestsDir, OurManifestName)
		o.KCMCheck = func(ctx context.Context, want Want) error {
			if got := readFile(t, kcmPath); !bytes.Equal(got, original) {
				t.Errorf("waiting for KCM before its manifest was restored")
			}
			if _, err := os.Stat(ourPath); err != nil {
				t.Errorf("our manifest removed before KCM was back")
			}
			if want.CommandLacks != "-persistentvolume-binder-controller" {
				t.Errorf("waiting for %+v", want)
			}
			if kcmUp {
				return nil
			}
			return ErrNotYet
		}
		err := Disable(o)
		_, statErr := os.Stat(ourPath)
		switch {
		case kcmUp && (err != nil || statErr == nil):
			t.Errorf("KCM up: Disable %v, our manifest present %v", err, statErr == nil)
		case !kcmUp && (err == nil || statErr != nil):
			t.Errorf("KCM not up: Disable %v, our manifest present %v; want an error and ours kept", err, statErr == nil)
		}
	}
}
