package main

import (
	"os"
	"strings"
	"testing"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	"sigs.k8s.io/yaml"
)

const committed = "../../../deploy/cluster-api/kubeadm-control-plane.yaml"

// The committed snippet is what the generator writes today, and Cluster API's types accept every
// field of it (strict: an unknown or misplaced field fails).
func TestSnippetIsCurrentAndDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	kcp, err := controlPlane("../../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.Marshal(kcp)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != header+string(want) {
		t.Errorf("%s is stale: make recipes", committed)
	}
	var decoded controlplanev1.KubeadmControlPlane
	if err := yaml.UnmarshalStrict(data, &decoded); err != nil {
		t.Fatalf("%s does not decode strictly into KubeadmControlPlane v1beta2: %v", committed, err)
	}
	args := decoded.Spec.KubeadmConfigSpec.ClusterConfiguration.ControllerManager.ExtraArgs
	if len(args) != 1 || args[0].Name != "controllers" || args[0].Value == nil ||
		!strings.Contains(*args[0].Value, "-persistentvolume-binder-controller") {
		t.Errorf("controllerManager.extraArgs %+v: the binder must be off", args)
	} else if !strings.Contains(*args[0].Value, "bootstrapsigner") || !strings.Contains(*args[0].Value, "tokencleaner") {
		// kubeadm's default list has them; an extraArgs entry replaces that list, and without the
		// bootstrap signer `kubeadm join` finds no signature in cluster-info (make e2e-kind, 2026-12-02).
		t.Errorf("controllers %q: kubeadm join needs bootstrapsigner and tokencleaner", *args[0].Value)
	}
	paths := map[string]string{}
	for _, f := range decoded.Spec.KubeadmConfigSpec.Files {
		paths[f.Path] = f.Content
	}
	if !strings.Contains(paths[manifestPath], "name: pv-controller-manager") {
		t.Errorf("no static pod manifest at %s", manifestPath)
	}
	if !strings.Contains(paths[rbacPath], "system:pv-controller-manager") {
		t.Errorf("no RBAC at %s", rbacPath)
	}
	cmds := decoded.Spec.KubeadmConfigSpec.PostKubeadmCommands
	if len(cmds) != 1 || !strings.HasPrefix(cmds[0], identityPath) || paths[identityPath] == "" {
		t.Errorf("postKubeadmCommands %v must run %s", cmds, identityPath)
	}
}

// A field Cluster API does not know is refused: the strict decode above is worth something.
func TestStrictDecodeRefusesUnknownFields(t *testing.T) {
	bad := "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\nspec:\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      controllerManagerr: {}\n"
	var decoded controlplanev1.KubeadmControlPlane
	if err := yaml.UnmarshalStrict([]byte(bad), &decoded); err == nil {
		t.Error("a misspelt field decoded")
	}
}
