package loadgen

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fastpv/pv-controller-manager/test/harness/loadgen/result"
)

// ScenarioWriteCeiling measures the apiserver, not a binder: run it with no binder running.
const ScenarioWriteCeiling = "write-ceiling"

// CeilingResult is the apiserver's write throughput for the writes a bind needs.
type CeilingResult = result.Ceiling

// MeasureWriteCeiling creates cfg.Count PV/PVC pairs, then performs on each pair the four writes a
// bind performs (the PV's claimRef, its status, the claim's annotations, its status), with
// cfg.Concurrency clients, and reports the throughput. The objects mimic a bind but no claim is
// really bound (the status is written back unchanged in phase). Run it without a binder.
func MeasureWriteCeiling(ctx context.Context, client clientset.Interface, cfg Config) (*CeilingResult, error) {
	if cfg.Count <= 0 || cfg.Concurrency <= 0 || cfg.Namespace == "" || cfg.Prefix == "" {
		return nil, fmt.Errorf("loadgen: count, concurrency, namespace and prefix are required")
	}
	cfg.Scenario = ScenarioPrebound
	res := &CeilingResult{Pairs: cfg.Count, Concurrency: cfg.Concurrency}
	// The created objects are kept: like a binder reading its informer cache, the writes below
	// need no GET.
	pvs := make([]*v1.PersistentVolume, cfg.Count+1)
	pvcs := make([]*v1.PersistentVolumeClaim, cfg.Count+1)
	start := time.Now()
	err := forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
		var err error
		if pvs[i], err = client.CoreV1().PersistentVolumes().Create(ctx, cfg.Volume(i), metav1.CreateOptions{}); err != nil {
			return err
		}
		pvcs[i], err = client.CoreV1().PersistentVolumeClaims(cfg.Namespace).Create(ctx, cfg.Claim(i), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Creates, res.CreateDuration = 2*cfg.Count, time.Since(start)

	start = time.Now()
	err = forEach(ctx, cfg.Count, cfg.Concurrency, func(i int) error {
		name := cfg.name(i)
		pv := pvs[i]
		var err error
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: cfg.Namespace, Name: name}
		if pv, err = client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return err
		}
		pv.Status.Message = "write-ceiling"
		if _, err = client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return err
		}
		pvc := pvcs[i]
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, "pv.kubernetes.io/write-ceiling", "yes")
		if pvc, err = client.CoreV1().PersistentVolumeClaims(cfg.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
			return err
		}
		pvc.Status.Phase = v1.ClaimPending
		_, err = client.CoreV1().PersistentVolumeClaims(cfg.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	res.BindWrites, res.BindWriteDuration = 4*cfg.Count, time.Since(start)
	res.BindWritesPerSecond = float64(res.BindWrites) / res.BindWriteDuration.Seconds()
	res.WritesPerSecond = float64(res.Creates+res.BindWrites) / (res.CreateDuration + res.BindWriteDuration).Seconds()
	return res, nil
}
