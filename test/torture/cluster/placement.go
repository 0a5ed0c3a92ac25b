package cluster

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fastpv/pv-controller-manager/test/invariants"
)

// placementWait bounds how long a settled run waits for kube-scheduler to place the pods of
// WaitForFirstConsumer claims that a free volume fits: it retries a pod it found unschedulable at
// the latest after 5 minutes (its podMaxInUnschedulablePodsDuration), sooner on a volume event.
const placementWait = 5*time.Minute + 30*time.Second

// unplaced lists the WaitForFirstConsumer claims of the run that are Pending (not being deleted,
// naming no volume) while a pod that uses them has no node and a free volume of their class fits
// them on a node with room for a pod: there kube-scheduler would place the pod. The binder has nothing to do with such a
// claim until then; what this catches is a cluster that stopped placing pods (a scheduler that
// exited and was not restarted), which left the run's WaitForFirstConsumer binds untested.
func unplaced(ctx context.Context, client clientset.Interface, namespace string, cl classes) ([]string, error) {
	claims, err := client.CoreV1().PersistentVolumeClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	volumes, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	// A node that runs as many pods as it allows takes no more: a volume there is no place for
	// the pod (kwok's nodes allow 110 each, and a long run leaves hundreds of pods).
	running := map[string]int{}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName != "" && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
			running[pod.Spec.NodeName]++
		}
	}
	full := map[string]bool{}
	for _, node := range nodes.Items {
		if allowed, ok := node.Status.Allocatable[v1.ResourcePods]; ok && int64(running[node.Name]) >= allowed.Value() {
			full[node.Name] = true
		}
	}
	waiting := map[string]string{} // claim name -> a pod without a node that uses it
	for _, pod := range pods.Items {
		if pod.Namespace != namespace || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			continue
		}
		for _, vol := range pod.Spec.Volumes {
			if vol.PersistentVolumeClaim != nil {
				waiting[vol.PersistentVolumeClaim.ClaimName] = pod.Name
			}
		}
	}
	var out []string
	for i := range claims.Items {
		claim := &claims.Items[i]
		pod, ok := waiting[claim.Name]
		if !ok || classOf(claim) != cl.wffc || claim.Status.Phase != v1.ClaimPending || claim.DeletionTimestamp != nil ||
			claim.Spec.VolumeName != "" {
			continue
		}
		for j := range volumes.Items {
			pv := &volumes.Items[j]
			if pv.Spec.StorageClassName != cl.wffc || pv.Spec.ClaimRef != nil || pv.DeletionTimestamp != nil ||
				pv.Status.Phase != v1.VolumeAvailable || invariants.FitsAlways(pv, claim) != nil || full[volumeNode(pv)] {
				continue
			}
			out = append(out, fmt.Sprintf("WaitForFirstConsumer claim %s Pending, its pod %s not placed, while volume %s (node %s) is Available and fits",
				claim.Name, pod, pv.Name, volumeNode(pv)))
			break
		}
	}
	sort.Strings(out)
	return out, nil
}

// waitPlaced polls unplaced until it finds none or within has passed, and returns what is left.
func waitPlaced(ctx context.Context, client clientset.Interface, namespace string, cl classes, within time.Duration) ([]string, error) {
	deadline := time.Now().Add(within)
	for {
		left, err := unplaced(ctx, client, namespace, cl)
		if err == nil && len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return left, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

func volumeNode(pv *v1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == v1.LabelHostname && len(e.Values) > 0 {
				return e.Values[0]
			}
		}
	}
	return ""
}
