package cluster

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// persistFor is how long a condition that a correct binder may pass through (one claim's bind
// written to two volumes before the rollback, a Lost claim whose volume came back) may last before
// it counts as a violation. Two Bound claims on one volume count at once.
const persistFor = 30 * time.Second

// Rules of the cluster torture's own, beside the invariants every harness checks.
const (
	ruleUnplaced invariants.Rule = "placement: a WaitForFirstConsumer claim's pod never placed"
	rulePanicked invariants.Rule = "a binder replica panicked"
)

// checker watches the run's claims and volumes directly (not through the proxy) and checks the
// invariants (test/invariants) at every event, every second for the conditions that must not
// persist, and once settled. What users asked for (a claim pre-bound, a volume reserving a claim)
// it reads from the annotations the workload put on the objects it created (annPrebound,
// annReserves).
type checker struct {
	began      time.Time
	lock       sync.Mutex
	claims     map[string]*v1.PersistentVolumeClaim // by name (one namespace)
	volumes    map[string]*v1.PersistentVolume
	releasedBy map[string]types.UID // volume -> the claim UID it was Released from
	since      map[string]time.Time // a persisting condition -> when first seen
	violations []invariants.Violation
	seen       map[string]bool
	lastChange time.Time
	bound      map[types.UID]bool // claims seen Bound at least once
	// boundOn indexes the claims Bound to each volume, so an event costs O(1), not O(claims).
	boundOn map[string]map[string]bool
	// boundByClass counts the claims ever Bound by kind of class (KindStatic, ...).
	boundByClass map[string]int
	classes      classes
	// liveRead lists the run's claims and volumes from the apiserver (quorum reads), to confirm a
	// condition before it counts; nil in unit tests that confirm with the caches.
	liveRead func() (map[string]*v1.PersistentVolumeClaim, map[string]*v1.PersistentVolume, error)
	// cacheLag counts conditions the caches showed long enough and a live read did not.
	cacheLag int
}

func newChecker(cl classes) *checker {
	return &checker{began: time.Now(), claims: map[string]*v1.PersistentVolumeClaim{}, volumes: map[string]*v1.PersistentVolume{},
		releasedBy: map[string]types.UID{}, since: map[string]time.Time{}, seen: map[string]bool{}, bound: map[types.UID]bool{},
		boundOn: map[string]map[string]bool{}, boundByClass: map[string]int{}, classes: cl}
}

// start runs informers on the run's objects until ctx is done.
func (c *checker) start(ctx context.Context, client clientset.Interface, namespace, run string) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "torture=" + run
	}))
	selector := metav1.ListOptions{LabelSelector: "torture=" + run} // ResourceVersion "": a quorum read
	c.liveRead = func() (map[string]*v1.PersistentVolumeClaim, map[string]*v1.PersistentVolume, error) {
		readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		claimList, err := client.CoreV1().PersistentVolumeClaims(namespace).List(readCtx, selector)
		if err != nil {
			return nil, nil, err
		}
		volumeList, err := client.CoreV1().PersistentVolumes().List(readCtx, selector)
		if err != nil {
			return nil, nil, err
		}
		claims := make(map[string]*v1.PersistentVolumeClaim, len(claimList.Items))
		for i := range claimList.Items {
			claims[claimList.Items[i].Name] = &claimList.Items[i]
		}
		volumes := make(map[string]*v1.PersistentVolume, len(volumeList.Items))
		for i := range volumeList.Items {
			volumes[volumeList.Items[i].Name] = &volumeList.Items[i]
		}
		return claims, volumes, nil
	}
	claims := factory.Core().V1().PersistentVolumeClaims().Informer()
	volumes := factory.Core().V1().PersistentVolumes().Informer()
	_, err := claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.onClaim(o.(*v1.PersistentVolumeClaim), false) },
		UpdateFunc: func(_, o any) { c.onClaim(o.(*v1.PersistentVolumeClaim), false) },
		DeleteFunc: func(o any) {
			if claim, ok := cache.DeletionHandlingObjectToName(o); ok == nil {
				c.lock.Lock()
				c.unindex(claim.Name)
				delete(c.claims, claim.Name)
				c.lastChange = time.Now()
				c.lock.Unlock()
			}
		},
	})
	if err != nil {
		return err
	}
	_, err = volumes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.onVolume(o.(*v1.PersistentVolume)) },
		UpdateFunc: func(_, o any) { c.onVolume(o.(*v1.PersistentVolume)) },
		DeleteFunc: func(o any) {
			if volume, ok := cache.DeletionHandlingObjectToName(o); ok == nil {
				c.lock.Lock()
				delete(c.volumes, volume.Name)
				delete(c.releasedBy, volume.Name)
				c.lastChange = time.Now()
				c.lock.Unlock()
			}
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("checker: caches did not sync")
		}
	}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				c.scan(false)
			}
		}
	}()
	return nil
}

// violate records v once per key: a broken state seen again later is the same one.
func (c *checker) violate(key string, v invariants.Violation) {
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	v.At = time.Since(c.began).Round(time.Second).String()
	c.violations = append(c.violations, v)
}

func violation(rule invariants.Rule, format string, a ...any) invariants.Violation {
	return invariants.Violation{Rule: rule, Detail: fmt.Sprintf(format, a...)}
}

func (c *checker) onClaim(claim *v1.PersistentVolumeClaim, _ bool) {
	c.lock.Lock()
	defer c.lock.Unlock()
	old := c.claims[claim.Name]
	c.unindex(claim.Name)
	c.claims[claim.Name] = claim.DeepCopy()
	c.lastChange = time.Now()
	k := invariants.ClaimKey(claim)
	if old != nil && old.UID == claim.UID && old.Spec.VolumeName != "" && old.Spec.VolumeName != claim.Spec.VolumeName {
		c.violate("volume-name/"+claim.Name, violation(invariants.VolumeNameChanged, "%s: %q -> %q", k, old.Spec.VolumeName, claim.Spec.VolumeName))
	}
	if want, ok := claim.Annotations[annPrebound]; ok && claim.Spec.VolumeName != want {
		c.violate("prebound/"+claim.Name, violation(invariants.PreboundElsewhere, "%s was created with volumeName %s, now %q", k, want, claim.Spec.VolumeName))
	}
	if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName == "" {
		return
	}
	if !c.bound[claim.UID] {
		c.bound[claim.UID] = true
		c.boundByClass[c.classes.kind(classOf(claim))]++
	}
	on := c.boundOn[claim.Spec.VolumeName]
	if on == nil {
		on = map[string]bool{}
		c.boundOn[claim.Spec.VolumeName] = on
	}
	on[claim.Name] = true
	// Never two claims Bound to one volume (invariants.TwoClaimsOnePV), checked at once on an index
	// of the claims Bound to each volume: two pods would write one disk.
	if len(on) > 1 {
		names := make([]string, 0, len(on))
		for name := range on {
			names = append(names, name)
		}
		sort.Strings(names)
		c.violate("two-claims/"+claim.Spec.VolumeName, violation(invariants.TwoClaimsOnePV, "claims %v are all Bound to volume %s", names, claim.Spec.VolumeName))
	}
}

// unindex forgets where the claim's previous version was Bound (c.lock held).
func (c *checker) unindex(name string) {
	if old := c.claims[name]; old != nil && old.Spec.VolumeName != "" {
		if on := c.boundOn[old.Spec.VolumeName]; on != nil {
			delete(on, name)
			if len(on) == 0 {
				delete(c.boundOn, old.Spec.VolumeName)
			}
		}
	}
}

func (c *checker) onVolume(volume *v1.PersistentVolume) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.volumes[volume.Name] = volume.DeepCopy()
	c.lastChange = time.Now()
	ref := volume.Spec.ClaimRef
	if want, ok := volume.Annotations[annReserves]; ok && ref != nil && invariants.RefKey(ref) != want {
		c.violate("reserved/"+volume.Name, violation(invariants.ReservedElsewhere, "%s reserved %s, now names %s", volume.Name, want, invariants.RefKey(ref)))
	}
	switch volume.Status.Phase {
	case v1.VolumeReleased:
		if ref != nil && ref.UID != "" {
			c.releasedBy[volume.Name] = ref.UID
		}
	case v1.VolumeBound:
		// A Released volume with Retain is never bound again.
		if from, ok := c.releasedBy[volume.Name]; ok && ref != nil && ref.UID != from {
			c.violate("rebound/"+volume.Name, violation(invariants.RetainedRebound, "volume %s, Released from claim UID %s (Retain), is Bound again to %s/%s (UID %s)", volume.Name, from, ref.Namespace, ref.Name, ref.UID))
		}
	}
}

// scan checks the conditions that may pass but must not persist; settled: none may exist at all.
// A condition is reported only if a live read (a quorum LIST of the run's claims and volumes, when
// the checker has one) still shows it: the checker's informers can lag the apiserver after it
// restarts (a 30-minute run flagged 9 claims Bound to volumes "without claimRef": the binder had
// written each claimRef once, 10 s after the apiserver came back, and never cleared it; the
// checker's volume watch had not caught up). A condition the live read does not show is counted
// as checker lag and watched again.
func (c *checker) scan(settled bool) {
	c.lock.Lock()
	defer c.lock.Unlock()
	now := time.Now()
	current := c.conditions(c.claims, c.volumes, settled)
	var due []string
	for key := range current {
		first, ok := c.since[key]
		if !ok {
			c.since[key] = now
			first = now
		}
		if (settled || now.Sub(first) >= persistFor) && !c.seen[key] {
			due = append(due, key)
		}
	}
	for key := range c.since {
		if _, still := current[key]; !still {
			delete(c.since, key)
		}
	}
	if len(due) == 0 {
		return
	}
	live := current
	if c.liveRead != nil {
		if claims, volumes, err := c.liveRead(); err == nil {
			live = c.conditions(claims, volumes, settled)
		} else {
			return // no verdict without a live read; the next scan asks again
		}
	}
	sort.Strings(due)
	for _, key := range due {
		if _, confirmed := live[key]; !confirmed {
			c.cacheLag++
			c.since[key] = now
			continue
		}
		v := current[key]
		if !settled {
			v.Detail += fmt.Sprintf(" (for %s)", now.Sub(c.since[key]).Round(time.Second))
		}
		c.violate(key, v)
	}
}

// conditions computes, over the given claims and volumes, the conditions scan checks, by key: the
// invariants a state shows (one claim on two Bound volumes, a Bound claim its volume does not name
// or fit, a claim Lost while its volume names it), and once settled every settled invariant.
func (c *checker) conditions(claims map[string]*v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume, settled bool) map[string]invariants.Violation {
	current := map[string]invariants.Violation{}
	add := func(v invariants.Violation) { current[v.Key()] = v }
	claimList := slices.Collect(maps.Values(claims))
	volumeList := slices.Collect(maps.Values(volumes))
	for _, v := range invariants.CheckOneClaimTwoPVs(volumeList, nil) {
		add(v)
	}
	for _, claim := range claimList {
		pv := volumes[claim.Spec.VolumeName]
		switch claim.Status.Phase {
		case v1.ClaimLost:
			if v := invariants.CheckLost(claim, pv); v != nil {
				add(*v)
			}
		case v1.ClaimBound:
			if pv == nil {
				continue // the user deleted it: the claim goes Lost (checked once settled)
			}
			// Once settled, a claim and volume that disagree are Settled's SettledHalfBound.
			if v := invariants.CheckBound(claim, pv, binding(pv, claim)); v != nil && !(settled && v.Rule == invariants.RefsDisagree) {
				add(*v)
			}
		}
	}
	if settled {
		for _, v := range invariants.Settled(volumeList, claimList, c.intent()) {
			add(v)
		}
	}
	return current
}

// binding is how the workload asked for pv and claim to be bound (its annotations).
func binding(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) invariants.Binding {
	return invariants.Binding{
		Prebound: claim.Annotations[annPrebound] != "",
		Reserved: pv.Annotations[annReserves] == invariants.ClaimKey(claim),
	}
}

// intent tells the settled checks the run's classes: WaitForFirstConsumer claims are the
// scheduler's to place (the binder only completes what it chose), and a claim of the provisioned
// class must have been handed to its provisioner.
func (c *checker) intent() invariants.Intent {
	return invariants.Intent{
		WaitForFirstConsumer: func(claim *v1.PersistentVolumeClaim) bool { return c.classes.kind(classOf(claim)) == KindWFFC },
		ProvisionStuck: func(claim *v1.PersistentVolumeClaim) (string, bool) {
			if c.classes.kind(classOf(claim)) == KindProvisioned && claim.Annotations[annStorageProvisioner] != Provisioner {
				return " (never handed to its provisioner: no " + annStorageProvisioner + " annotation)", true
			}
			return "", false
		},
	}
}

// lagged is how many conditions the caches showed long enough that a live read did not.
func (c *checker) lagged() int {
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.cacheLag
}

// quietFor is how long no claim or volume of the run has changed.
func (c *checker) quietFor() time.Duration {
	c.lock.Lock()
	defer c.lock.Unlock()
	return time.Since(c.lastChange)
}

func (c *checker) result() (violations []invariants.Violation, claims, bound, boundEver int, byClass map[string]int) {
	c.lock.Lock()
	defer c.lock.Unlock()
	byClass = maps.Clone(c.boundByClass)
	for _, claim := range c.claims {
		claims++
		if claim.Status.Phase == v1.ClaimBound {
			bound++
		}
	}
	return slices.Clone(c.violations), claims, bound, len(c.bound), byClass
}

func (c *checker) randomClaim(rng *rand.Rand) string {
	c.lock.Lock()
	defer c.lock.Unlock()
	names := make([]string, 0, len(c.claims))
	for name := range c.claims {
		names = append(names, name)
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return names[rng.IntN(len(names))]
}

func (c *checker) randomVolume(rng *rand.Rand, phase v1.PersistentVolumePhase) string {
	c.lock.Lock()
	defer c.lock.Unlock()
	var names []string
	for name, v := range c.volumes {
		if phase == "" || v.Status.Phase == phase {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return names[rng.IntN(len(names))]
}
