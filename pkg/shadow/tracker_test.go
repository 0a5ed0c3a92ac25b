package shadow

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

type world struct {
	now     time.Time
	volumes map[string]*v1.PersistentVolume
	events  *record.FakeRecorder
	tracker *Tracker
}

func newWorld(t *testing.T) *world {
	w := &world{now: time.Unix(1000, 0), volumes: map[string]*v1.PersistentVolume{}, events: record.NewFakeRecorder(10)}
	logger, _ := ktesting.NewTestContext(t)
	w.tracker = NewTracker(logger, Config{
		Window:   time.Minute,
		Volume:   func(name string) (*v1.PersistentVolume, error) { return w.volumes[name], nil },
		Recorder: w.events,
		Now:      func() time.Time { return w.now },
	})
	return w
}

func volume(name, size, class string) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{
		Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
		AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		StorageClassName: class,
	}}
}

func claim(name string, uid types.UID, phase v1.PersistentVolumeClaimPhase, volumeName string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(""),
			VolumeName:       volumeName,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

// oursBinds is ours' dry-run claimRef write of volume name for claim uid.
func (w *world) oursBinds(t *testing.T, name string, uid types.UID) {
	pv := volume(name, "1Gi", "")
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "c", UID: uid}
	body, err := json.Marshal(pv)
	if err != nil {
		t.Fatal(err)
	}
	w.tracker.Observe(Write{Method: "PUT", Resource: "persistentvolumes", Body: body})
}

func (w *world) counts() map[Outcome]int { return w.tracker.Counts() }

func TestAgreeRecordsHowMuchSoonerOursDecided(t *testing.T) {
	w := newWorld(t)
	w.tracker.OnClaim(claim("c", "u1", v1.ClaimPending, ""))
	w.oursBinds(t, "pv-1", "u1")
	w.now = w.now.Add(4 * time.Second)
	w.tracker.OnClaim(claim("c", "u1", v1.ClaimBound, "pv-1"))
	if got := w.counts(); got[Agree] != 1 || len(got) != 1 {
		t.Errorf("outcomes %v, want one agree", got)
	}
	if ev := <-w.events.Events; !strings.Contains(ev, "ours decided 4s sooner") || !strings.Contains(ev, AnnotationLead+":4.000") {
		t.Errorf("event %q, want the lead in the message and the annotation", ev)
	}
}

func TestDisagreeWarnsOnTheClaimWithBothChoices(t *testing.T) {
	w := newWorld(t)
	w.volumes["pv-small"], w.volumes["pv-big"] = volume("pv-small", "1Gi", ""), volume("pv-big", "5Gi", "")
	w.tracker.OnClaim(claim("c", "u1", v1.ClaimPending, ""))
	w.oursBinds(t, "pv-small", "u1")
	w.tracker.OnClaim(claim("c", "u1", v1.ClaimBound, "pv-big"))
	if got := w.counts(); got[Disagree] != 1 {
		t.Errorf("outcomes %v, want one disagree", got)
	}
	select {
	case ev := <-w.events.Events:
		if !strings.Contains(ev, "Warning "+ReasonDisagreement) || !strings.Contains(ev, "volume pv-small") || !strings.Contains(ev, "volume pv-big") {
			t.Errorf("event %q, want a warning naming both volumes", ev)
		}
	default:
		t.Error("no event")
	}
}

func TestEqualVolumesThatBothFitDisagreeLegitimately(t *testing.T) {
	w := newWorld(t)
	w.volumes["pv-a"], w.volumes["pv-b"] = volume("pv-a", "2Gi", ""), volume("pv-b", "2Gi", "")
	// Meanwhile KCM gave ours' choice to another claim: it was free when ours chose it.
	w.volumes["pv-a"].Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "other", UID: "u2"}
	w.tracker.OnClaim(claim("c", "u1", v1.ClaimPending, ""))
	w.oursBinds(t, "pv-a", "u1")
	w.tracker.OnClaim(claim("c", "u1", v1.ClaimBound, "pv-b"))
	if got := w.counts(); got[DisagreeLegitimate] != 1 {
		t.Errorf("outcomes %v, want one disagree-legitimate", got)
	}
	if ev := <-w.events.Events; !strings.HasPrefix(ev, "Normal "+ReasonCompared+" disagree-legitimate:") {
		t.Errorf("a legitimate difference is a Normal event, not a warning: %q", ev)
	}
}

func TestOnlyOursAfterTheWindowOnlyKCMWhenOursNeverDecided(t *testing.T) {
	w := newWorld(t)
	w.tracker.OnClaim(claim("a", "ua", v1.ClaimPending, ""))
	w.oursBinds(t, "pv-1", "ua")
	w.now = w.now.Add(59 * time.Second)
	w.tracker.Expire()
	if got := w.counts(); len(got) != 0 {
		t.Fatalf("within the window: %v", got)
	}
	w.now = w.now.Add(time.Second)
	w.tracker.Expire()
	w.tracker.OnClaim(claim("a", "ua", v1.ClaimBound, "pv-1")) // too late: already counted
	w.tracker.OnClaim(claim("b", "ub", v1.ClaimPending, ""))
	w.tracker.OnClaim(claim("b", "ub", v1.ClaimBound, "pv-2"))
	if got := w.counts(); got[OnlyOurs] != 1 || got[OnlyKCM] != 1 || len(got) != 2 {
		t.Errorf("outcomes %v, want one only-ours and one only-kcm", got)
	}
	for _, want := range []string{"Normal ShadowCompared only-ours: pv-controller-manager (shadow) would have chosen volume pv-1; kube-controller-manager's binder had not bound the claim 1m0s later",
		"Normal ShadowCompared only-kcm: kube-controller-manager's binder chose volume pv-2 before pv-controller-manager (shadow) had decided"} {
		if ev := <-w.events.Events; !strings.HasPrefix(ev, want) {
			t.Errorf("event %q, want %q", ev, want)
		}
	}
}

func TestClaimsBoundBeforeTheShadowStartedAreNotCompared(t *testing.T) {
	w := newWorld(t)
	w.tracker.OnClaim(claim("old", "uo", v1.ClaimBound, "pv-1"))
	w.oursBinds(t, "pv-1", "uo") // ours completing what is already bound: resolved, not counted
	if got := w.counts(); len(got) != 0 {
		t.Errorf("outcomes %v, want none", got)
	}
}

func TestProvisioningDecisionsCompare(t *testing.T) {
	w := newWorld(t)
	c := claim("p", "up", v1.ClaimPending, "")
	w.tracker.OnClaim(c)
	annotated := c.DeepCopy()
	annotated.Annotations = map[string]string{annStorageProvisioner: "csi.example.com"}
	body, _ := json.Marshal(annotated)
	w.tracker.Observe(Write{Method: "PUT", Resource: "persistentvolumeclaims", Body: body})
	w.tracker.OnClaim(annotated) // KCM's real annotation
	if got := w.counts(); got[Agree] != 1 || len(got) != 1 {
		t.Errorf("outcomes %v, want one agree (both handed it to csi.example.com)", got)
	}
}
