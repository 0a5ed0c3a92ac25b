package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

func testClaim(name string, uid types.UID, volume string, phase v1.PersistentVolumeClaimPhase) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "t", UID: uid},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume, StorageClassName: ptr.To(""),
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func testVolume(name string, claim string, uid types.UID, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	v := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		Status:     v1.PersistentVolumeStatus{Phase: phase},
	}
	if claim != "" {
		v.Spec.ClaimRef = &v1.ObjectReference{Namespace: "t", Name: claim, UID: uid}
	}
	return v
}

func violations(c *checker) string {
	vs, _, _, _, _ := c.result()
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = v.String()
	}
	return strings.Join(lines, "\n")
}

// broken lists the rules the checker found broken.
func broken(c *checker) []invariants.Rule {
	vs, _, _, _, _ := c.result()
	var rules []invariants.Rule
	for _, v := range vs {
		rules = append(rules, v.Rule)
	}
	return rules
}

// persisted makes every condition the checker watches look older than persistFor.
func persisted(c *checker) {
	for key := range c.since {
		c.since[key] = time.Now().Add(-persistFor - time.Second)
	}
}

func TestCheckerTwoClaimsOnOneVolumeAtOnce(t *testing.T) {
	c := newChecker(testClasses)
	c.onClaim(testClaim("a", "ua", "pv", v1.ClaimBound), false)
	if got := violations(c); got != "" {
		t.Fatalf("one claim: %s", got)
	}
	c.onClaim(testClaim("b", "ub", "pv", v1.ClaimBound), false)
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.TwoClaimsOnePV}) {
		t.Fatalf("two claims Bound to one volume: %q", violations(c))
	}
}

func TestCheckerReleasedRetainNeverBoundAgain(t *testing.T) {
	c := newChecker(testClasses)
	c.onVolume(testVolume("pv", "a", "ua", v1.VolumeReleased))
	c.onVolume(testVolume("pv", "a", "ua", v1.VolumeBound)) // the same claim's stale copy: counted elsewhere
	if got := violations(c); got != "" {
		t.Fatalf("same UID: %s", got)
	}
	c.onVolume(testVolume("pv", "a2", "ua2", v1.VolumeBound))
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.RetainedRebound}) {
		t.Fatalf("rebound to another claim: %q", violations(c))
	}
}

// A condition a correct binder passes through counts only when it persists, or once settled.
func TestCheckerPersistingConditions(t *testing.T) {
	c := newChecker(testClasses)
	c.onVolume(testVolume("pv1", "a", "ua", v1.VolumeBound))
	c.onVolume(testVolume("pv2", "a", "ua", v1.VolumeBound))
	c.scan(false)
	if got := violations(c); got != "" {
		t.Fatalf("just seen: %s", got)
	}
	persisted(c)
	c.scan(false)
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.OneClaimTwoPVs}) {
		t.Fatalf("persisting: %q", violations(c))
	}
}

func TestCheckerSettledLiveness(t *testing.T) {
	c := newChecker(testClasses)
	c.onClaim(testClaim("m", "um", "", v1.ClaimPending), false)
	c.onVolume(testVolume("big", "", "", v1.VolumeAvailable))
	c.scan(true)
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.SettledFreeFits}) {
		t.Fatalf("liveness: %q", violations(c))
	}
	c = newChecker(testClasses)
	c.onClaim(testClaim("p", "up", "gone", v1.ClaimPending), false)
	c.onVolume(testVolume("released", "x", "ux", v1.VolumeReleased))
	c.scan(true)
	if got := violations(c); got != "" {
		t.Fatalf("nothing fits: %s", got)
	}
}

// The index of Bound claims follows updates and deletes: a claim that left a volume does not
// count against the next claim Bound to it.
func TestCheckerIndexForgetsClaimsThatLeft(t *testing.T) {
	c := newChecker(testClasses)
	c.onClaim(testClaim("a", "ua", "pv", v1.ClaimBound), false)
	c.onClaim(testClaim("a", "ua", "pv", v1.ClaimLost), false) // not Bound any more
	c.onClaim(testClaim("b", "ub", "pv", v1.ClaimBound), false)
	c.lock.Lock()
	c.unindex("b") // as the informer's delete handler does
	delete(c.claims, "b")
	c.lock.Unlock()
	c.onClaim(testClaim("c", "uc", "pv", v1.ClaimBound), false)
	if got := violations(c); got != "" {
		t.Fatalf("one claim Bound at a time: %s", got)
	}
	c.onClaim(testClaim("d", "ud", "pv", v1.ClaimBound), false)
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.TwoClaimsOnePV}) {
		t.Fatalf("c and d on one volume: %q", violations(c))
	}
}

func TestCheckerBoundClaimOnAVolumeThatDoesNotFit(t *testing.T) {
	c := newChecker(testClasses)
	claim := testClaim("a", "ua", "pv", v1.ClaimBound)
	claim.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("2Gi")
	c.onClaim(claim, false)
	c.onVolume(testVolume("pv", "a", "ua", v1.VolumeBound))
	c.scan(true)
	if got := violations(c); !slices.Contains(broken(c), invariants.NoFit) || !strings.Contains(got, "capacity 1Gi < request 2Gi") {
		t.Fatalf("a 2Gi claim on a 1Gi volume: %q", got)
	}
}

func TestCheckerProvisionedClaimNeverHandedToItsProvisioner(t *testing.T) {
	c := newChecker(testClasses)
	claim := testClaim("a", "ua", "", v1.ClaimPending)
	claim.Spec.StorageClassName = ptr.To(testClasses.provisioned)
	c.onClaim(claim, false)
	wffc := testClaim("w", "uw", "", v1.ClaimPending)
	wffc.Spec.StorageClassName = ptr.To(testClasses.wffc)
	c.onClaim(wffc, false)
	c.onVolume(testVolume("free", "", "", v1.VolumeAvailable)) // class "": fits neither
	c.scan(true)
	got := violations(c)
	if !slices.Equal(broken(c), []invariants.Rule{invariants.SettledProvision}) || !strings.Contains(got, "t/a Pending (never handed to its provisioner") {
		t.Fatalf("a provisioned claim without the annotation: %q", got)
	}
	if strings.Contains(got, "t/w") || strings.Contains(got, "free") {
		t.Fatalf("a WaitForFirstConsumer claim is the scheduler's, and a class \"\" volume fits neither: %q", got)
	}
}

var testClasses = runClasses("t")

// The 30-minute run of 2026-12-02 (seed 20261202, ours): after an apiserver restart the checker's
// volume cache still showed 9 freshly bound volumes without claimRef while their claims were Bound;
// the binder had written each claimRef once and never cleared it. A condition only counts if a live
// read shows it too; otherwise it is checker lag, and watched again.
func TestCheckerConfirmsPersistingConditionsWithALiveRead(t *testing.T) {
	stale := testVolume("pv", "", "", v1.VolumeAvailable) // what the lagging cache shows
	live := testVolume("pv", "a", "ua", v1.VolumeBound)   // what the apiserver has
	claim := testClaim("a", "ua", "pv", v1.ClaimBound)

	c := newChecker(testClasses)
	c.onClaim(claim, false)
	c.onVolume(stale)
	c.liveRead = func() (map[string]*v1.PersistentVolumeClaim, map[string]*v1.PersistentVolume, error) {
		return map[string]*v1.PersistentVolumeClaim{"a": claim}, map[string]*v1.PersistentVolume{"pv": live}, nil
	}
	c.scan(false)
	persisted(c)
	c.scan(false)
	if got := violations(c); got != "" {
		t.Fatalf("a condition the live read does not show counted: %s", got)
	}
	if c.lagged() != 1 {
		t.Errorf("checker lag %d, want 1", c.lagged())
	}

	// The same condition, and the apiserver shows it too: a violation.
	c.liveRead = func() (map[string]*v1.PersistentVolumeClaim, map[string]*v1.PersistentVolume, error) {
		return map[string]*v1.PersistentVolumeClaim{"a": claim}, map[string]*v1.PersistentVolume{"pv": stale}, nil
	}
	persisted(c)
	c.scan(false)
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.RefsDisagree}) {
		t.Fatalf("a confirmed condition: %q", violations(c))
	}
}

// Every state the invariants package plants, each breaking one rule, fails this checker with that
// rule: fed as the informers would deliver it, then checked as a persisting condition (a safety
// rule) or once settled (a settled rule).
func TestCheckerFailsEveryPlantedViolation(t *testing.T) {
	for _, p := range invariants.Planted() {
		t.Run(string(p.Rule), func(t *testing.T) {
			c := newChecker(classes{static: invariants.PlantedClass})
			for _, pv := range p.Volumes {
				c.onVolume(pv)
			}
			for _, claim := range p.Claims {
				c.onClaim(claim, false)
			}
			c.scan(p.Settled)
			persisted(c)
			c.scan(p.Settled)
			if got := broken(c); !slices.Contains(got, p.Rule) {
				t.Errorf("planted %q: the checker found %q", p.Rule, violations(c))
			}
		})
	}
}

// A condition is confirmed by its rule and subject, not its wording: the checker's caches and the
// live read may name different volumes that fit a claim left Pending.
func TestCheckerConfirmsAConditionByRuleAndSubject(t *testing.T) {
	claim := testClaim("m", "um", "", v1.ClaimPending)
	c := newChecker(testClasses)
	c.onClaim(claim, false)
	c.onVolume(testVolume("a", "", "", v1.VolumeAvailable))
	c.liveRead = func() (map[string]*v1.PersistentVolumeClaim, map[string]*v1.PersistentVolume, error) {
		return map[string]*v1.PersistentVolumeClaim{"m": claim}, map[string]*v1.PersistentVolume{"b": testVolume("b", "", "", v1.VolumeAvailable)}, nil
	}
	c.scan(true)
	if got := broken(c); !slices.Equal(got, []invariants.Rule{invariants.SettledFreeFits}) {
		t.Fatalf("a claim Pending while a volume fits, in the caches and in the live read: %q (lag %d)", violations(c), c.lagged())
	}
}
