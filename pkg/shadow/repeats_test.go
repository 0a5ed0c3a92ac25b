package shadow

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
)

// fakeAPIServer answers every dry-run PUT as the apiserver does (the object as written, at the
// version written), or 409 for the paths in conflicts (once each), and counts what reached it.
type fakeAPIServer struct {
	mu        sync.Mutex
	puts      map[string]int // path -> dry-run PUTs received
	conflicts map[string]bool
	notDry    int
}

func newFakeAPIServer(t *testing.T) (*fakeAPIServer, *httptest.Server) {
	f := &fakeAPIServer{puts: map[string]int{}, conflicts: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		if r.URL.Query().Get("dryRun") != "All" {
			f.notDry++
		}
		f.puts[r.URL.Path]++
		conflict := f.conflicts[r.URL.Path]
		delete(f.conflicts, r.URL.Path)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if conflict {
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(apierrors.NewConflict(v1.Resource("persistentvolumeclaims"), "c", fmt.Errorf("the object has been modified")).Status())
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPIServer) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.puts[path]
}

func shadowClient(t *testing.T, srv *httptest.Server, d *DryRunWrites) kubernetes.Interface {
	t.Helper()
	cfg := &restclient.Config{Host: srv.URL}
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	cfg.Wrap(d.Wrap)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func boundVolume(name, rv string, claimUID types.UID, claimRV string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv,
			Annotations: map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}},
		Spec:   v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c-" + name, UID: claimUID, ResourceVersion: claimRV}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumePending},
	}
}

// A write the apiserver accepted is not sent again for the same object and content, whatever the
// versions it carries; the binder still gets the object it wrote, at the version it wrote.
func TestDryRunSendsARepeatedWriteOnce(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAPIServer(t)
	d := NewDryRunWrites(nil)
	c := shadowClient(t, srv, d)
	const pvPath, pvStatusPath = "/api/v1/persistentvolumes/pv-1", "/api/v1/persistentvolumes/pv-1/status"

	// The bind's first write, then the same decision after a resync (a later version of the
	// volume, the claim read at a later version).
	if _, err := c.CoreV1().PersistentVolumes().Update(ctx, boundVolume("pv-1", "5", "claim-1", "10"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c.CoreV1().PersistentVolumes().Update(ctx, boundVolume("pv-1", "6", "claim-1", "11"), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count(pvPath); n != 1 {
		t.Errorf("the same claimRef written twice reached the apiserver %d times, want 1", n)
	}
	if got.ResourceVersion != "6" || got.Spec.ClaimRef == nil || got.Spec.ClaimRef.UID != "claim-1" || got.Spec.ClaimRef.ResourceVersion != "11" {
		t.Errorf("the repeat's answer is not the object written: version %q, claimRef %+v", got.ResourceVersion, got.Spec.ClaimRef)
	}

	// The status write is a write of its own; once accepted, a repeat is answered here too.
	for _, rv := range []string{"6", "7"} {
		pv := boundVolume("pv-1", rv, "claim-1", "11")
		pv.Status.Phase = v1.VolumeBound
		if _, err := c.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count(pvStatusPath); n != 1 {
		t.Errorf("the same status written twice reached the apiserver %d times, want 1", n)
	}

	// Another decision (another claim) is new content: sent.
	if _, err := c.CoreV1().PersistentVolumes().Update(ctx, boundVolume("pv-1", "7", "claim-2", "3"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// So is a change of the object that the write carries (a label set by someone else).
	labelled := boundVolume("pv-1", "8", "claim-2", "3")
	labelled.Labels = map[string]string{"team": "a"}
	if _, err := c.CoreV1().PersistentVolumes().Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := f.count(pvPath); n != 3 {
		t.Errorf("volume writes sent: %d, want 3 (two new contents after the first)", n)
	}
	// A namesake (another UID) is another object.
	renewed := boundVolume("pv-1", "9", "claim-1", "10")
	renewed.UID = "uid-pv-1-again"
	if _, err := c.CoreV1().PersistentVolumes().Update(ctx, renewed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := f.count(pvPath); n != 4 {
		t.Errorf("volume writes sent: %d, want 4 (a re-created volume is written afresh)", n)
	}
	// A deleted volume is forgotten.
	d.Forget("persistentvolumes", "", "pv-1")
	if _, err := c.CoreV1().PersistentVolumes().Update(ctx, renewed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := f.count(pvPath); n != 5 {
		t.Errorf("volume writes sent: %d, want 5 (forgotten after its deletion)", n)
	}
	if f.notDry != 0 {
		t.Errorf("%d writes went out without dryRun=All", f.notDry)
	}
}

// A refused write (409: the binder wrote at a stale version) is not remembered: its retry at the
// fresh version is sent and checked by the apiserver.
func TestDryRunSendsTheRetryOfARefusedWrite(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAPIServer(t)
	c := shadowClient(t, srv, NewDryRunWrites(nil))
	const path = "/api/v1/namespaces/ns/persistentvolumeclaims/c-1"
	f.conflicts[path] = true
	claim := func(rv string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c-1", Namespace: "ns", UID: "claim-1", ResourceVersion: rv,
				Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
		}
	}
	if _, err := c.CoreV1().PersistentVolumeClaims("ns").Update(ctx, claim("3"), metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("first write: %v, want the apiserver's conflict", err)
	}
	for _, rv := range []string{"4", "5"} {
		if _, err := c.CoreV1().PersistentVolumeClaims("ns").Update(ctx, claim(rv), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count(path); n != 2 {
		t.Errorf("claim writes sent: %d, want 2 (the refused one, its retry; the repeat of the accepted retry answered here)", n)
	}
}

// Reads, creates, deletes and writes of other resources always go out (as dry runs).
func TestDryRunSendsWhatIsNotAVolumeOrClaimUpdate(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAPIServer(t)
	c := shadowClient(t, srv, NewDryRunWrites(nil))
	event := &v1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, Reason: "x"}
	for range 2 {
		if _, err := c.CoreV1().Events("ns").Create(ctx, event, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().PersistentVolumes().Create(ctx, boundVolume("pv-new", "", "c", "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, m := f.count("/api/v1/namespaces/ns/events"), f.count("/api/v1/persistentvolumes"); n != 2 || m != 2 {
		t.Errorf("events sent %d, volume creates sent %d; want 2 and 2", n, m)
	}
}

// The binder's workers write concurrently: each object's repeats are answered here, the memory is
// shared by every transport of one DryRunWrites, and Forget runs beside them (go test -race).
func TestDryRunRepeatsConcurrently(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAPIServer(t)
	d := NewDryRunWrites(nil)
	clients := []kubernetes.Interface{shadowClient(t, srv, d), shadowClient(t, srv, d)}
	const workers, rounds = 8, 30
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			name := fmt.Sprintf("pv-%d", w)
			for r := range rounds {
				pv := boundVolume(name, fmt.Sprint(100+r), types.UID("claim-"+name), fmt.Sprint(r))
				if _, err := clients[r%2].CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for r := range rounds {
				d.Forget("persistentvolumes", "", fmt.Sprintf("gone-%d-%d", w, r))
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if n := f.count(fmt.Sprintf("/api/v1/persistentvolumes/pv-%d", w)); n != 1 {
			t.Errorf("pv-%d: %d writes sent for one decision written %d times, want 1", w, n, rounds)
		}
	}
	if n := d.repeats.len(); n != workers {
		t.Errorf("%d objects remembered, want %d", n, workers)
	}
}

func TestParsePVWriteIgnoresWhatTheServerDecides(t *testing.T) {
	a := `{"metadata":{"name":"pv","uid":"u","resourceVersion":"1","managedFields":[{"manager":"x"}]},"spec":{"claimRef":{"name":"c","uid":"cu","resourceVersion":"7"}},"status":{"phase":"Pending"}}`
	b := `{"metadata":{"name":"pv","uid":"u","resourceVersion":"2"},"spec":{"claimRef":{"name":"c","uid":"cu","resourceVersion":"8"}},"status":{"phase":"Available"}}`
	wa, wb := parsePVWrite(http.MethodPut, "persistentvolumes", "", []byte(a)), parsePVWrite(http.MethodPut, "persistentvolumes", "", []byte(b))
	if wa == nil || wb == nil || wa.content != wb.content {
		t.Errorf("an object write differing only in versions, managedFields and status has another content")
	}
	sa := parsePVWrite(http.MethodPut, "persistentvolumes", "status", []byte(strings.Replace(a, `"Pending"`, `"Bound","lastPhaseTransitionTime":"2026-01-01T00:00:00Z"`, 1)))
	sb := parsePVWrite(http.MethodPut, "persistentvolumes", "status", []byte(strings.Replace(b, `"Available"`, `"Bound"`, 1)))
	if sa == nil || sb == nil || sa.content != sb.content {
		t.Errorf("a status write differing only in versions and the phase's time has another content")
	}
	sc := parsePVWrite(http.MethodPut, "persistentvolumes", "status", []byte(strings.Replace(strings.Replace(b, `"Available"`, `"Bound"`, 1), `"cu"`, `"other"`, 1)))
	if sc.content == sb.content {
		t.Errorf("a status write for another claim has the same content")
	}
	if parsePVWrite(http.MethodPost, "persistentvolumes", "", []byte(a)) != nil || parsePVWrite(http.MethodPut, "persistentvolumes", "", []byte("{")) != nil {
		t.Errorf("a create or a body that is not JSON is parsed as a repeatable write")
	}
}
