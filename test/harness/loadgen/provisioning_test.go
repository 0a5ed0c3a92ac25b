package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestProvisionerCreatesVolumeLikeExternalProvisioner(t *testing.T) {
	cfg := Config{Scenario: ScenarioProvisioning, Namespace: "ns", Prefix: "p", Count: 3, Concurrency: 2}
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := startProvisioner(ctx, client, &cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	handed := cfg.Claim(1)
	handed.UID = "uid-1"
	if handed.Spec.StorageClassName == nil || *handed.Spec.StorageClassName != cfg.StorageClassName() || handed.Spec.VolumeName != "" {
		t.Fatalf("claim: class %v, volumeName %q; want the scenario's class and no volume", handed.Spec.StorageClassName, handed.Spec.VolumeName)
	}
	handed.Annotations = map[string]string{annStorageProvisioner: Provisioner}
	notYet := cfg.Claim(2)
	notYet.UID = "uid-2"
	other := cfg.Claim(3)
	other.UID = "uid-3"
	other.Annotations = map[string]string{annStorageProvisioner: "ebs.csi.aws.com"}
	for _, c := range []*v1.PersistentVolumeClaim{handed, notYet, other} {
		if _, err := client.CoreV1().PersistentVolumeClaims("ns").Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The same claim again (a later event): still one volume.
	if _, err := client.CoreV1().PersistentVolumeClaims("ns").Update(ctx, handed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pv *v1.PersistentVolume
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		pv, err = client.CoreV1().PersistentVolumes().Get(ctx, "pvc-uid-1", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal("no volume provisioned for the handed-over claim")
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Name != handed.Name || ref.Namespace != "ns" || ref.UID != "uid-1" ||
		pv.Spec.StorageClassName != cfg.StorageClassName() || pv.Annotations[annProvisionedBy] != Provisioner ||
		pv.Labels["loadgen"] != "p" || pv.Spec.CSI == nil {
		t.Fatalf("volume %+v does not look like external-provisioner's", pv)
	}
	pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if len(pvs.Items) != 1 {
		t.Fatalf("%d volumes, want 1 (only the claim handed to us, once)", len(pvs.Items))
	}
	if err := p.failure(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyProvisioning(t *testing.T) {
	cfg := Config{Scenario: ScenarioProvisioning, Namespace: "ns", Prefix: "p"}
	claim := cfg.Claim(1)
	claim.UID = "u1"
	pv := cfg.ProvisionedVolume(claim)
	claim.Spec.VolumeName = pv.Name
	claim.Status.Phase = v1.ClaimBound
	pv.Status.Phase = v1.VolumeBound
	if err := Verify(context.Background(), fake.NewClientset(pv, claim), cfg); err != nil {
		t.Fatalf("provisioned pair: %v", err)
	}
	other := cfg.Claim(2)
	other.UID = "u2"
	wrong := cfg.ProvisionedVolume(other)
	wrong.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: claim.Name, UID: "u1"}
	claim.Spec.VolumeName = wrong.Name
	if err := Verify(context.Background(), fake.NewClientset(wrong, claim), cfg); err == nil || !strings.Contains(err.Error(), "not to the volume provisioned for it") {
		t.Fatalf("claim bound to another claim's volume: %v", err)
	}
}

// A PV the apiserver keeps refusing is reported, not left to look like a slow binder.
func TestProvisionerReportsFailedCreates(t *testing.T) {
	cfg := Config{Scenario: ScenarioProvisioning, Namespace: "ns", Prefix: "p", Count: 1, Concurrency: 1}
	client := fake.NewClientset()
	client.PrependReactor("create", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("quota exceeded")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := startProvisioner(ctx, client, &cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	claim := cfg.Claim(1)
	claim.UID = "uid-1"
	claim.Annotations = map[string]string{annStorageProvisioner: Provisioner}
	if _, err := client.CoreV1().PersistentVolumeClaims("ns").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return p.failure() != nil, nil
	}); err != nil {
		t.Fatal("a refused create was not reported")
	}
	if !strings.Contains(p.failure().Error(), "quota exceeded") {
		t.Fatalf("failure %v does not say why", p.failure())
	}
}
