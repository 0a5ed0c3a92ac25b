package invariants

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// PlantedClass is the storage class of the planted objects: a class with no provisioner that
// binds at once (no harness gives it a meaning of its own).
const PlantedClass = "planted"

// PlantedNamespace is the namespace of the planted claims.
const PlantedNamespace = "planted"

// A PlantedState breaks Rule: the objects as a binder left them. Settled: Rule is one of
// Settled's, judged once the run is quiet; otherwise a safety rule, broken as soon as the state
// exists. Each harness's unit tests run their own checker on every planted state and expect
// Rule among what it reports, so a rule a harness stops checking fails its tests.
type PlantedState struct {
	Rule    Rule
	Settled bool
	Volumes []*v1.PersistentVolume
	Claims  []*v1.PersistentVolumeClaim
}

// Planted returns one state per rule that a snapshot of claims and volumes shows.
func Planted() []PlantedState {
	return []PlantedState{
		{Rule: TwoClaimsOnePV,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-1")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimBound, "pv-1"), plantedClaim("c-2", "1Gi", v1.ClaimBound, "pv-1"))},
		{Rule: OneClaimTwoPVs,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-1"), plantedPV("pv-2", "1Gi", v1.VolumeBound, "c-1")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimBound, "pv-1"))},
		{Rule: RefsDisagree,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-9")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimBound, "pv-1"))},
		{Rule: NoFit,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-1")),
			Claims:  claims(plantedClaim("c-1", "2Gi", v1.ClaimBound, "pv-1"))},
		{Rule: BoundLost,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-1")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimLost, "pv-1"))},
		{Rule: SettledFreeFits, Settled: true,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeAvailable, "")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimPending, ""))},
		{Rule: SettledPrebound, Settled: true,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeAvailable, "")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimPending, "pv-1"))},
		{Rule: SettledReserved, Settled: true,
			Volumes: vols(reserving(plantedPV("pv-1", "1Gi", v1.VolumeAvailable, ""), "c-1")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimPending, ""))},
		{Rule: SettledOrphan, Settled: true,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, "c-9"))},
		{Rule: BoundWithoutRef, Settled: true,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeBound, ""))},
		{Rule: SettledPVPending, Settled: true,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumePending, ""))},
		{Rule: SettledLostMissing, Settled: true,
			Claims: claims(plantedClaim("c-1", "1Gi", v1.ClaimBound, "pv-9"))},
		{Rule: SettledHalfBound, Settled: true,
			Volumes: vols(plantedPV("pv-1", "1Gi", v1.VolumeAvailable, "")),
			Claims:  claims(plantedClaim("c-1", "1Gi", v1.ClaimBound, "pv-1"))},
	}
}

// PlantedUID is the UID of the planted claim of that name.
func PlantedUID(claim string) types.UID { return types.UID("uid-" + claim) }

// plantedPV is a volume of PlantedClass, bound by claimRef (with its UID) to claim unless "".
func plantedPV(name, size string, phase v1.PersistentVolumePhase, claim string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              PlantedClass,
		},
		Status: v1.PersistentVolumeStatus{Phase: phase},
	}
	if claim != "" {
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: PlantedNamespace, Name: claim, UID: PlantedUID(claim)}
	}
	return pv
}

// reserving makes pv reserve claim by claimRef without its UID, as a user does.
func reserving(pv *v1.PersistentVolume, claim string) *v1.PersistentVolume {
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: PlantedNamespace, Name: claim}
	return pv
}

// plantedClaim is a claim of PlantedClass naming volume in spec.volumeName unless "".
func plantedClaim(name, size string, phase v1.PersistentVolumeClaimPhase, volume string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: PlantedNamespace, UID: PlantedUID(name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(PlantedClass),
			VolumeName:       volume,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func vols(pvs ...*v1.PersistentVolume) []*v1.PersistentVolume { return pvs }

func claims(c ...*v1.PersistentVolumeClaim) []*v1.PersistentVolumeClaim { return c }
