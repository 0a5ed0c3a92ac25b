package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// CanaryLabel marks the pair a canary creates.
const CanaryLabel = "pv-controller-manager/canary"

// Canary creates a PersistentVolume and a claim in namespace, each naming the other (the pair a
// binder binds with the fewest writes), waits up to timeout for the claim to be Bound to it, and
// deletes both whatever happened. The volume is a hostPath nothing mounts, with reclaim policy
// Retain: no plugin is called, nothing on any node is touched. It returns how long the bind took.
func Canary(ctx context.Context, client kubernetes.Interface, namespace string, timeout time.Duration) (time.Duration, error) {
	if _, err := client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); err != nil {
		return 0, fmt.Errorf("canary namespace %q: %w", namespace, err)
	}
	name := "pv-rollout-canary-" + utilrand.String(6)
	labels := map[string]string{"app.kubernetes.io/name": "pv-controller-manager", CanaryLabel: "true"}
	size := resource.MustParse("1Mi")
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: namespace, Name: name},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{
				Path: "/nonexistent/pv-rollout-canary", Type: ptr.To(v1.HostPathDirectory)}},
		},
	}
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
			StorageClassName: ptr.To(""),
			VolumeName:       name,
		},
	}
	// Deleted with a fresh context: the caller's may be what ended the wait.
	cleanup := func() error {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var errs []error
		if err := client.CoreV1().PersistentVolumeClaims(namespace).Delete(dctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting claim %s/%s: %w", namespace, name, err))
		}
		if err := client.CoreV1().PersistentVolumes().Delete(dctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting volume %s: %w", name, err))
		}
		return errors.Join(errs...)
	}
	start := time.Now()
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("creating canary volume %s: %w", name, err)
	}
	if _, err := client.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return 0, errors.Join(fmt.Errorf("creating canary claim %s/%s: %w", namespace, name, err), cleanup())
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var phase v1.PersistentVolumeClaimPhase
	for {
		got, err := client.CoreV1().PersistentVolumeClaims(namespace).Get(wctx, name, metav1.GetOptions{})
		if err == nil {
			phase = got.Status.Phase
			if phase == v1.ClaimBound && got.Spec.VolumeName == name {
				took := time.Since(start)
				return took, cleanup()
			}
		}
		select {
		case <-wctx.Done():
			return 0, errors.Join(fmt.Errorf("canary claim %s/%s not Bound after %s (phase %q): no binder bound it", namespace, name, timeout, phase), cleanup())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
