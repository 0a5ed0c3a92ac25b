package explain

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// Snapshot is everything an explanation reads. Leases and Nodes are optional: without them the
// binder's state (or a node's labels) is reported as unknown.
type Snapshot struct {
	Claims  []*v1.PersistentVolumeClaim
	Volumes []*v1.PersistentVolume
	Classes []*storagev1.StorageClass
	Pods    []*v1.Pod
	Events  []*v1.Event
	Nodes   []*v1.Node
	Leases  []*coordinationv1.Lease
	// HaveLeases is true when the leases of kube-system were read (an empty list then means
	// that no binder holds one).
	HaveLeases bool
	// Now is the time ages are measured from (the newest timestamp in a dump, the clock live).
	Now time.Time
}

// Scope selects the claims a live snapshot reads.
type Scope struct {
	// Namespace of the claims ("" with AllNamespaces).
	Namespace     string
	AllNamespaces bool
}

// LoadFromCluster reads a snapshot with list calls only: claims, pods and events of the scope,
// every PV, StorageClass and Node, and the leases of kube-system (skipped when forbidden).
func LoadFromCluster(ctx context.Context, client kubernetes.Interface, scope Scope) (*Snapshot, error) {
	ns := scope.Namespace
	if scope.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	s := &Snapshot{Now: time.Now()}
	list := metav1.ListOptions{ResourceVersion: "0"} // served from the apiserver's watch cache
	claims, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("listing PersistentVolumeClaims: %w", err)
	}
	s.Claims = pointers(claims.Items)
	volumes, err := client.CoreV1().PersistentVolumes().List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("listing PersistentVolumes: %w", err)
	}
	s.Volumes = pointers(volumes.Items)
	classes, err := client.StorageV1().StorageClasses().List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("listing StorageClasses: %w", err)
	}
	s.Classes = pointers(classes.Items)
	pods, err := client.CoreV1().Pods(ns).List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("listing Pods: %w", err)
	}
	s.Pods = pointers(pods.Items)
	events, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "involvedObject.kind=PersistentVolumeClaim"})
	if err != nil {
		return nil, fmt.Errorf("listing Events: %w", err)
	}
	s.Events = pointers(events.Items)
	// Optional: a user allowed to read claims may not be allowed to read nodes or kube-system.
	if nodes, err := client.CoreV1().Nodes().List(ctx, list); err == nil {
		s.Nodes = pointers(nodes.Items)
	}
	if leases, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, list); err == nil {
		s.HaveLeases = true
		s.Leases = pointers(leases.Items)
	}
	if ns != metav1.NamespaceAll && ns != metav1.NamespaceSystem {
		// KCM's own pods tell whether it runs its binder.
		if pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: "component=kube-controller-manager"}); err == nil {
			s.Pods = append(s.Pods, pointers(pods.Items)...)
		}
	}
	return s, nil
}

// LoadFromFile reads a snapshot from `kubectl get pvc,pv,sc,pods,events[,nodes,leases] -A -o yaml`
// (or -o json) output: a List, or several YAML documents, of those kinds. Other kinds are
// ignored; an object that does not decode is an error naming its position.
func LoadFromFile(r io.Reader) (*Snapshot, error) {
	s := &Snapshot{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	decode := scheme.Codecs.UniversalDeserializer()
	var add func(raw []byte, where string) error
	add = func(raw []byte, where string) error {
		obj, _, err := decode.Decode(raw, nil, nil)
		if err != nil {
			if runtime.IsNotRegisteredError(err) {
				return nil // a kind we do not read
			}
			return fmt.Errorf("%s: %w", where, err)
		}
		switch o := obj.(type) {
		case *metav1.List:
			for i, item := range o.Items {
				if err := add(item.Raw, fmt.Sprintf("%s, item %d", where, i)); err != nil {
					return err
				}
			}
		case *v1.List:
			for i, item := range o.Items {
				if err := add(item.Raw, fmt.Sprintf("%s, item %d", where, i)); err != nil {
					return err
				}
			}
		case *v1.PersistentVolumeClaim:
			s.Claims = append(s.Claims, o)
		case *v1.PersistentVolumeClaimList:
			s.Claims = append(s.Claims, pointers(o.Items)...)
		case *v1.PersistentVolume:
			s.Volumes = append(s.Volumes, o)
		case *v1.PersistentVolumeList:
			s.Volumes = append(s.Volumes, pointers(o.Items)...)
		case *storagev1.StorageClass:
			s.Classes = append(s.Classes, o)
		case *storagev1.StorageClassList:
			s.Classes = append(s.Classes, pointers(o.Items)...)
		case *v1.Pod:
			s.Pods = append(s.Pods, o)
		case *v1.PodList:
			s.Pods = append(s.Pods, pointers(o.Items)...)
		case *v1.Event:
			s.Events = append(s.Events, o)
		case *v1.EventList:
			s.Events = append(s.Events, pointers(o.Items)...)
		case *v1.Node:
			s.Nodes = append(s.Nodes, o)
		case *v1.NodeList:
			s.Nodes = append(s.Nodes, pointers(o.Items)...)
		case *coordinationv1.Lease:
			s.HaveLeases = true
			s.Leases = append(s.Leases, o)
		case *coordinationv1.LeaseList:
			s.HaveLeases = true
			s.Leases = append(s.Leases, pointers(o.Items)...)
		}
		return nil
	}
	for doc := 1; ; doc++ {
		var raw runtime.RawExtension
		if err := decoder.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		raw.Raw = bytes.TrimSpace(raw.Raw)
		if len(raw.Raw) == 0 || string(raw.Raw) == "null" {
			continue
		}
		if err := add(raw.Raw, fmt.Sprintf("document %d", doc)); err != nil {
			return nil, err
		}
	}
	s.Now = s.newestTimestamp()
	return s, nil
}

// pointers returns a pointer to each item of a list, in place (no copies).
func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// newestTimestamp is the latest time recorded in the snapshot: a dump's "now".
func (s *Snapshot) newestTimestamp() time.Time {
	var newest time.Time
	see := func(t time.Time) {
		if t.After(newest) {
			newest = t
		}
	}
	for _, e := range s.Events {
		see(eventTime(e))
	}
	for _, c := range s.Claims {
		see(c.CreationTimestamp.Time)
	}
	for _, v := range s.Volumes {
		see(v.CreationTimestamp.Time)
		if v.Status.LastPhaseTransitionTime != nil {
			see(v.Status.LastPhaseTransitionTime.Time)
		}
	}
	for _, l := range s.Leases {
		if l.Spec.RenewTime != nil {
			see(l.Spec.RenewTime.Time)
		}
	}
	if newest.IsZero() {
		return time.Now()
	}
	return newest
}

// eventTime is when an event last happened, whichever of its fields is set.
func eventTime(e *v1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
