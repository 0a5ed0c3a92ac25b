package explain

import (
	"bytes"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/pkg/controller/volume/persistentvolume"
)

func loadDump(t testing.TB) *Snapshot {
	t.Helper()
	f, err := os.Open("testdata/dump.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := LoadFromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExplainVerdicts: every verdict, from real object YAML (testdata/dump.yaml, one namespace
// per case, read by the --from-file path).
func TestExplainVerdicts(t *testing.T) {
	a := NewAnalyzer(loadDump(t))
	tests := []struct {
		namespace string
		verdict   Verdict
		resize    ResizeState
		volume    string
		ok        bool
		// every string must appear in the summary, a detail or a candidate's reasons
		says []string
		// candidates, nearest first, when the case lists them
		candidates []string
	}{
		{namespace: "bound", verdict: Bound, resize: ResizeNone, volume: "pv-bound", ok: true, says: []string{"Bound to \"pv-bound\"", "pre-bound by spec.volumeName", "since 26s ago"}},
		{namespace: "matched", verdict: Bound, resize: ResizeNone, volume: "pv-matched", ok: true, says: []string{"chosen by the binder"}},
		{namespace: "no-expand", verdict: Bound, resize: ResizeNone, volume: "pv-noexpand", ok: true, says: []string{`StorageClass "manual" does not set allowVolumeExpansion`}},
		{namespace: "prebound-missing", verdict: PreboundVolumeMissing, volume: "pv-not-there", says: []string{`PV "pv-not-there", which does not exist`}},
		{namespace: "prebound-mismatch", verdict: PreboundVolumeMismatch, volume: "pv-misfit", says: []string{
			"capacity 1Gi is less than the requested 5Gi", "volumeMode Block, the claim asks for Filesystem",
			`storageClassName "gold", the claim asks for "manual"`, "accessModes [ReadWriteOnce] lack [ReadWriteMany]",
			`binder: "requested PV is too small"`}},
		{namespace: "prebound-taken", verdict: PreboundVolumeTaken, volume: "pv-other", says: []string{"claim other-ns/owner (uid uid-owner)"}},
		{namespace: "prebound-deleting", verdict: PreboundVolumeMismatch, volume: "pv-deleting", says: []string{"the PV is being deleted", "being deleted"}},
		{namespace: "released", verdict: VolumeReleased, volume: "pv-released", says: []string{"earlier claim of this name (uid uid-old)", "phase Released", "reclaim policy Retain", "operator must clear"}},
		{namespace: "reserved", verdict: BindPending, volume: "pv-reserved", says: []string{"reserved for it by the volume's claimRef"}},
		{namespace: "reserved-small", verdict: ReservedVolumeMismatch, volume: "pv-reserved-small", says: []string{"reserves this claim by claimRef", "capacity 1Gi is less than the requested 2Gi"}},
		{namespace: "match", verdict: BindPending, volume: "pv-fits", says: []string{"smallest Available volume that fits"}},
		{namespace: "nomatch", verdict: NoMatch, says: []string{
			"the class provisions nothing", "capacity 1Gi is less than the requested 5Gi",
			"labels {tier=slow} do not match the claim's selector tier=fast", "phase Pending (only Available volumes are matched)",
			"accessModes [ReadOnlyMany] lack [ReadWriteOnce]", "claimed by claim released/data"},
			candidates: []string{"pv-nm-small", "pv-nm-label", "pv-nm-pending", "pv-nm-rox", "pv-released"}},
		{namespace: "no-class", verdict: NoMatch, says: []string{"no storage class is set"}},
		{namespace: "wffc", verdict: WaitForFirstConsumer, says: []string{`class "local-wffc" binds at first use`, "no pod uses the claim"}},
		{namespace: "wffc-pod", verdict: WaitForPodScheduled, says: []string{"pod app-0", "didn't find available persistent volumes"}},
		{namespace: "wffc-provision", verdict: Provisioning, says: []string{`provisioner "csi.example.com"`, `on node "node-2"`}},
		{namespace: "provision-failed", verdict: ProvisioningFailed, says: []string{`provisioner "csi.example.com" failed`, "quota exceeded"}},
		{namespace: "affinity", verdict: Bound, resize: ResizeNone, volume: "pv-pinned", ok: true, says: []string{`node affinity: PV "pv-pinned" cannot be used on node "node-1" (pod app-0)`}},
		{namespace: "lost", verdict: Lost, volume: "pv-gone", says: []string{`volume "pv-gone" was deleted`}},
		{namespace: "terminating", verdict: Terminating, volume: "pv-terminating", says: []string{"pods app-0"}},
		{namespace: "resize-controller", verdict: Bound, resize: ResizeControllerInProgress, volume: "pv-resize-ctrl", says: []string{`resizer "csi.example.com"`, "expanding to 10Gi"}},
		{namespace: "resize-node", verdict: Bound, resize: ResizeNodePending, volume: "pv-resize-node", says: []string{"next mount", "grown to 10Gi"}},
		{namespace: "resize-infeasible", verdict: Bound, resize: ResizeControllerInfeasible, volume: "pv-resize-bad", says: []string{"failed for good", "not below 5Gi"}},
	}
	for _, tc := range tests {
		t.Run(tc.namespace, func(t *testing.T) {
			claim := a.Claim(tc.namespace, "data")
			if claim == nil {
				t.Fatalf("no claim %s/data in testdata/dump.yaml", tc.namespace)
			}
			r := a.Explain(claim)
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%s)", r.Verdict, tc.verdict, r.Summary)
			}
			if r.Volume != tc.volume {
				t.Errorf("volume %q, want %q", r.Volume, tc.volume)
			}
			if r.OK != tc.ok {
				t.Errorf("ok %v, want %v", r.OK, tc.ok)
			}
			if tc.resize != "" && (r.Resize == nil || r.Resize.State != tc.resize) {
				t.Errorf("resize %+v, want state %s", r.Resize, tc.resize)
			}
			text := reportText(r)
			for _, want := range tc.says {
				if !strings.Contains(text, want) {
					t.Errorf("report does not say %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "disagree with the binder") {
				t.Errorf("pvc-why disagrees with the binder:\n%s", text)
			}
			if tc.candidates != nil {
				var got []string
				for _, c := range r.Candidates {
					got = append(got, c.Name)
				}
				if strings.Join(got, ",") != strings.Join(tc.candidates, ",") {
					t.Errorf("candidates %v, want %v", got, tc.candidates)
				}
			}
		})
	}
}

// reportText is everything a report says, as one string.
func reportText(r *Report) string {
	var b bytes.Buffer
	b.WriteString(r.Summary + "\n")
	b.WriteString(strings.Join(r.Details, "\n") + "\n")
	for _, c := range r.Candidates {
		b.WriteString(c.Name + ": " + strings.Join(c.Reasons, "; ") + "\n")
	}
	if r.Resize != nil {
		b.WriteString(r.Resize.Summary + "\n" + r.Resize.ExpansionRejected + "\n")
	}
	return b.String()
}

// TestBinderStatus: who binds, from the Leases and KCM's pod.
func TestBinderStatus(t *testing.T) {
	s := loadDump(t)
	b := binderStatus(s)
	if !b.Known || b.Ours != "cp-1_6f1c" || b.KCM != "cp-1_0a2b" || b.KCMBinder != "disabled" {
		t.Errorf("binder %+v, want ours cp-1_6f1c, KCM cp-1_0a2b without its binder", b)
	}

	// KCM's leader runs its binder.
	kcm := findPod(s, "kube-system", "kube-controller-manager-cp-1")
	kcm.Spec.Containers[0].Command = []string{"kube-controller-manager", "--controllers=*"}
	if b := binderStatus(s); b.KCMBinder != "enabled" {
		t.Errorf("KCM with --controllers=*: binder %q, want enabled", b.KCMBinder)
	}

	// Our Lease expired, KCM's renewed, KCM not a pod here: it may be binding, so no claim may
	// say that nobody binds.
	for _, l := range s.Leases {
		if l.Name == OurLease {
			l.Spec.RenewTime = &metav1.MicroTime{Time: s.Now.Add(-15 * time.Minute)}
		}
	}
	kcm.Spec.NodeName = "elsewhere"
	a := NewAnalyzer(s)
	if a.binder.Ours != "" || a.binder.KCM == "" || a.binder.KCMBinder != "unknown" {
		t.Errorf("our Lease expired, KCM's renewed, no KCM pod: binder %+v", a.binder)
	}
	if r := a.Explain(a.Claim("match", "data")); strings.Contains(r.Summary, "no binder is running") {
		t.Errorf("summary %q says no binder runs while KCM (binder unknown) holds its Lease", r.Summary)
	}

	// Both Leases expired: nobody binds, and a claim that would bind says so.
	for _, l := range s.Leases {
		l.Spec.RenewTime = &metav1.MicroTime{Time: s.Now.Add(-15 * time.Minute)}
	}
	a = NewAnalyzer(s)
	if a.binder.Ours != "" || a.binder.KCM != "" {
		t.Errorf("expired Leases: binder %+v, want no holders", a.binder)
	}
	if r := a.Explain(a.Claim("match", "data")); !strings.Contains(r.Summary, "no binder is running") {
		t.Errorf("summary %q does not say that no binder runs", r.Summary)
	}

	// A dump without Leases: unknown, and no claim blames the binder.
	s.Leases, s.HaveLeases = nil, false
	a = NewAnalyzer(s)
	if a.binder.Known || !strings.Contains(a.binder.Summary, "unknown") {
		t.Errorf("no Leases: binder %+v, want unknown", a.binder)
	}
}

func findPod(s *Snapshot, namespace, name string) *v1.Pod {
	for _, p := range s.Pods {
		if p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	return nil
}

func TestLoadFromFileErrors(t *testing.T) {
	_, err := LoadFromFile(strings.NewReader("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: [not, a, map]\n"))
	if err == nil || !strings.Contains(err.Error(), "document 1") {
		t.Errorf("bad object: %v, want an error naming document 1", err)
	}
	s, err := LoadFromFile(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: y}\n"))
	if err != nil || len(s.Claims) != 0 {
		t.Errorf("other kinds: %v, %d claims; want them ignored", err, len(s.Claims))
	}
}

// TestRejectionsAgreeWithBinder: over many random claim/volume pairs, the reasons pvc-why gives
// are empty exactly when the binder's own code (the controller's index, checkVolumeSatisfyClaim)
// would bind the pair. This is what keeps the explanations from drifting from the binder.
func TestRejectionsAgreeWithBinder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	a := NewAnalyzer(&Snapshot{})
	pick := func(options ...string) string { return options[rng.Intn(len(options))] }
	modes := [][]v1.PersistentVolumeAccessMode{{v1.ReadWriteOnce}, {v1.ReadOnlyMany}, {v1.ReadWriteOnce, v1.ReadOnlyMany}, {v1.ReadWriteMany}, {v1.ReadWriteOncePod}}
	block, fs := v1.PersistentVolumeBlock, v1.PersistentVolumeFilesystem
	volumeModes := []*v1.PersistentVolumeMode{nil, &block, &fs}
	var accepted, prebindOK int
	for i := 0; i < 5000; i++ {
		claim := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: pick("a", "b"), UID: types.UID(pick("uid-a", "uid-b"))},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      modes[rng.Intn(len(modes))],
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick("1Gi", "2Gi", "5Gi"))}},
				StorageClassName: ptr.To(pick("", "gold", "silver")),
				VolumeMode:       volumeModes[rng.Intn(len(volumeModes))],
			},
		}
		if rng.Intn(3) == 0 {
			claim.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": pick("fast", "slow")}}
		}
		if rng.Intn(8) == 0 {
			claim.Spec.VolumeAttributesClassName = ptr.To("vac")
		}
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{"tier": pick("fast", "slow")}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick("1Gi", "2Gi", "5Gi", "10Gi"))},
				AccessModes:      modes[rng.Intn(len(modes))],
				StorageClassName: pick("", "gold", "silver"),
				VolumeMode:       volumeModes[rng.Intn(len(volumeModes))],
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.PersistentVolumePhase(pick("Available", "Available", "Pending", "Released"))},
		}
		if rng.Intn(4) == 0 {
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: pick("a", "b"), UID: types.UID(pick("", "uid-a", "uid-b"))}
		}
		if rng.Intn(10) == 0 {
			pv.DeletionTimestamp = &metav1.Time{}
		}
		if rng.Intn(8) == 0 {
			pv.Spec.VolumeAttributesClassName = ptr.To("vac")
		}
		reasons := a.rejections(claim, pv)
		if binder := binderAccepts(claim, pv); binder != (len(reasons) == 0) {
			t.Fatalf("case %d: binder accepts=%v, pvc-why's reasons %q\nclaim %+v\npv %+v", i, binder, reasons, claim.Spec, pv.Spec)
		} else if binder {
			accepted++
		}
		if pv.Spec.ClaimRef == nil {
			mismatches := prebindMismatches(claim, pv)
			if binderErr := persistentvolume.CheckVolumeSatisfyClaim(pv, claim); (binderErr == nil) != (len(mismatches) == 0) {
				t.Fatalf("case %d: checkVolumeSatisfyClaim=%v, pvc-why's mismatches %q", i, binderErr, mismatches)
			} else if binderErr == nil {
				prebindOK++
			}
		}
	}
	// Both outcomes must be exercised, or the agreement says nothing.
	if accepted < 50 || prebindOK < 50 {
		t.Errorf("only %d matches and %d fitting pre-bound pairs in 5000 cases: the generator is too narrow", accepted, prebindOK)
	}
}
