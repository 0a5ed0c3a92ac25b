package pendingclaims

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func claim(name string, age time.Duration, class, volumeName string, size string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(-age))},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			VolumeName:       volumeName,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

func volume(name, class, size string, claimRef *v1.ObjectReference, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			StorageClassName:       class,
			ClaimRef:               claimRef,
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp"}},
		},
		Status: v1.PersistentVolumeStatus{Phase: phase},
	}
}

func ref(name, uid string) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: name, UID: types.UID(uid)}
}

func collector(t testing.TB, claims []*v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume) *Collector {
	t.Helper()
	claimIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	volumeIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	classIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range claims {
		if err := claimIndexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range volumes {
		if err := volumeIndexer.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	immediate, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	for _, class := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
	} {
		if err := classIndexer.Add(class); err != nil {
			t.Fatal(err)
		}
	}
	return &Collector{
		Claims:  corelisters.NewPersistentVolumeClaimLister(claimIndexer),
		Volumes: corelisters.NewPersistentVolumeLister(volumeIndexer),
		Classes: storagelisters.NewStorageClassLister(classIndexer),
		Now:     func() time.Time { return now },
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name       string
		claims     []*v1.PersistentVolumeClaim
		volumes    []*v1.PersistentVolume
		maxClaims  int
		wantCounts map[string]int
		wantOldest map[string]time.Duration
	}{
		{
			name:       "a young claim is still being bound",
			claims:     []*v1.PersistentVolumeClaim{claim("young", 30*time.Second, "fast", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "1Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{},
		},
		{
			name:       "an available volume fits an old claim",
			claims:     []*v1.PersistentVolumeClaim{claim("old", 5*time.Minute, "fast", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "2Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{ReasonMatchingVolume: 1},
			wantOldest: map[string]time.Duration{ReasonMatchingVolume: 5 * time.Minute},
		},
		{
			name:       "no volume is large enough",
			claims:     []*v1.PersistentVolumeClaim{claim("old", 5*time.Minute, "fast", "", "3Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "2Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{},
		},
		{
			name:       "a volume of another class does not fit",
			claims:     []*v1.PersistentVolumeClaim{claim("old", 5*time.Minute, "fast", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "slow", "1Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{},
		},
		{
			name:       "a claim waiting for its first consumer is the scheduler's",
			claims:     []*v1.PersistentVolumeClaim{claim("wffc", 5*time.Minute, "local", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "local", "1Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{},
		},
		{
			name:       "a released volume is not free",
			claims:     []*v1.PersistentVolumeClaim{claim("old", 5*time.Minute, "fast", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "1Gi", nil, v1.VolumeReleased)},
			wantCounts: map[string]int{},
		},
		{
			name:       "the claim names a free volume",
			claims:     []*v1.PersistentVolumeClaim{claim("named", 2*time.Minute, "", "pv", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "", "1Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{ReasonPreboundVolume: 1},
			wantOldest: map[string]time.Duration{ReasonPreboundVolume: 2 * time.Minute},
		},
		{
			// pvc-why: PreboundVolumeMismatch. Counting it would page someone for a claim no
			// binder can bind.
			name:       "the claim names a free volume too small for it",
			claims:     []*v1.PersistentVolumeClaim{claim("named", 2*time.Minute, "", "pv", "5Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "", "1Gi", nil, v1.VolumeAvailable)},
			wantCounts: map[string]int{},
		},
		{
			name:       "a volume that reserves the claim but does not fit it",
			claims:     []*v1.PersistentVolumeClaim{claim("reserved", 3*time.Minute, "fast", "", "5Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "1Gi", ref("reserved", ""), v1.VolumeAvailable)},
			wantCounts: map[string]int{},
		},
		{
			name:       "the claim names a volume already bound to it",
			claims:     []*v1.PersistentVolumeClaim{claim("named", 2*time.Minute, "", "pv", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "", "1Gi", ref("named", "uid-named"), v1.VolumeBound)},
			wantCounts: map[string]int{ReasonPreboundVolume: 1},
			wantOldest: map[string]time.Duration{ReasonPreboundVolume: 2 * time.Minute},
		},
		{
			name:       "the claim names a volume of another claim",
			claims:     []*v1.PersistentVolumeClaim{claim("named", 2*time.Minute, "", "pv", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "", "1Gi", ref("other", "uid-other"), v1.VolumeBound)},
			wantCounts: map[string]int{},
		},
		{
			name:       "the claim names a volume that does not exist",
			claims:     []*v1.PersistentVolumeClaim{claim("named", 2*time.Minute, "", "missing", "1Gi")},
			wantCounts: map[string]int{},
		},
		{
			name:       "a volume's claimRef names the claim",
			claims:     []*v1.PersistentVolumeClaim{claim("reserved", 3*time.Minute, "fast", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "1Gi", ref("reserved", ""), v1.VolumeAvailable)},
			wantCounts: map[string]int{ReasonPreboundVolume: 1},
			wantOldest: map[string]time.Duration{ReasonPreboundVolume: 3 * time.Minute},
		},
		{
			name:       "a claimRef for an earlier claim of that name does not count",
			claims:     []*v1.PersistentVolumeClaim{claim("reserved", 3*time.Minute, "fast", "", "1Gi")},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "1Gi", ref("reserved", "uid-earlier"), v1.VolumeReleased)},
			wantCounts: map[string]int{},
		},
		{
			name: "only the oldest claims are examined",
			claims: []*v1.PersistentVolumeClaim{
				claim("c", 3*time.Minute, "fast", "", "1Gi"),
				claim("a", 9*time.Minute, "fast", "", "5Gi"),
				claim("b", 7*time.Minute, "fast", "", "1Gi"),
			},
			volumes:    []*v1.PersistentVolume{volume("pv", "fast", "1Gi", nil, v1.VolumeAvailable)},
			maxClaims:  2,
			wantCounts: map[string]int{ReasonMatchingVolume: 1},
			wantOldest: map[string]time.Duration{ReasonMatchingVolume: 7 * time.Minute},
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			c := collector(t, test.claims, test.volumes)
			c.MaxClaims = test.maxClaims
			counts, oldest := c.Evaluate()
			if len(counts) != len(test.wantCounts) {
				t.Errorf("counts %v, want %v", counts, test.wantCounts)
			}
			for reason, want := range test.wantCounts {
				if counts[reason] != want {
					t.Errorf("counts[%s] = %d, want %d", reason, counts[reason], want)
				}
			}
			for reason, want := range test.wantOldest {
				if oldest[reason] != want {
					t.Errorf("oldest[%s] = %v, want %v", reason, oldest[reason], want)
				}
			}
		})
	}
}

func TestCollectExportsBothReasonsAndWaitsForCaches(t *testing.T) {
	c := collector(t, []*v1.PersistentVolumeClaim{claim("old", 5*time.Minute, "fast", "", "1Gi")},
		[]*v1.PersistentVolume{volume("pv", "fast", "1Gi", nil, v1.VolumeAvailable)})
	synced := false
	c.Synced = func() bool { return synced }
	registry := metrics.NewKubeRegistry()
	registry.CustomMustRegister(c)

	if err := testutil.GatherAndCompare(registry, strings.NewReader(""), "pv_controller_bindable_pending_claims"); err != nil {
		t.Errorf("before the caches synced: %v", err)
	}
	synced = true
	want := `
# HELP pv_controller_bindable_pending_claim_max_age_seconds [ALPHA] Age of the oldest claim counted by pv_controller_bindable_pending_claims, by reason; 0 when there is none.
# TYPE pv_controller_bindable_pending_claim_max_age_seconds gauge
pv_controller_bindable_pending_claim_max_age_seconds{reason="matching-volume"} 300
pv_controller_bindable_pending_claim_max_age_seconds{reason="prebound-volume"} 0
`
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), "pv_controller_bindable_pending_claim_max_age_seconds"); err != nil {
		t.Error(err)
	}
}

func TestCollectReusesARecentEvaluation(t *testing.T) {
	c := collector(t, []*v1.PersistentVolumeClaim{claim("old", 5*time.Minute, "fast", "", "1Gi")},
		[]*v1.PersistentVolume{volume("pv", "fast", "1Gi", nil, v1.VolumeAvailable)})
	clock := now
	c.Now = func() time.Time { return clock }
	registry := metrics.NewKubeRegistry()
	registry.CustomMustRegister(c)
	gauge := func(want string) string {
		return "\n# HELP pv_controller_bindable_pending_claims [ALPHA] Claims Pending for longer than a minute that the binder could bind now, by reason: prebound-volume (a volume is pre-bound to the claim or the claim to a free volume), matching-volume (an unbound volume fits it). Counted among the 200 oldest Pending claims.\n" +
			"# TYPE pv_controller_bindable_pending_claims gauge\n" +
			"pv_controller_bindable_pending_claims{reason=\"matching-volume\"} " + want + "\n" +
			"pv_controller_bindable_pending_claims{reason=\"prebound-volume\"} 0\n"
	}
	if err := testutil.GatherAndCompare(registry, strings.NewReader(gauge("1")), "pv_controller_bindable_pending_claims"); err != nil {
		t.Fatal(err)
	}
	// The volume goes; within the cache window the scrape still says what it computed.
	c.Volumes = collector(t, nil, nil).Volumes
	clock = now.Add(5 * time.Second)
	if err := testutil.GatherAndCompare(registry, strings.NewReader(gauge("1")), "pv_controller_bindable_pending_claims"); err != nil {
		t.Errorf("within the cache window: %v", err)
	}
	clock = now.Add(DefaultCacheFor)
	if err := testutil.GatherAndCompare(registry, strings.NewReader(gauge("0")), "pv_controller_bindable_pending_claims"); err != nil {
		t.Errorf("after the cache window: %v", err)
	}
}
