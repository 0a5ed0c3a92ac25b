package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
	"sigs.k8s.io/yaml"
)

const upstreamBinderRole = "system:controller:persistent-volume-binder"

// TestClusterRoleEqualsUpstreams: our ClusterRole grants exactly what upstream's binder role grants.
func TestClusterRoleEqualsUpstreams(t *testing.T) {
	var ours *rbacv1.ClusterRole
	for _, doc := range rbacDocs(t) {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &role); err == nil && role.Kind == "ClusterRole" && role.Name == "system:pv-controller-manager" {
			ours = &role
		}
	}
	if ours == nil {
		t.Fatal("ClusterRole system:pv-controller-manager not found in deploy/rbac")
	}
	var upstream *rbacv1.ClusterRole
	for _, role := range bootstrappolicy.ControllerRoles() {
		if role.Name == upstreamBinderRole {
			upstream = &role
		}
	}
	if upstream == nil {
		t.Fatalf("upstream role %s not found", upstreamBinderRole)
	}
	if got, want := ruleStrings(ours.Rules), ruleStrings(upstream.Rules); !slices.Equal(got, want) {
		t.Errorf("our ClusterRole differs from %s:\n got  %q\n want %q", upstreamBinderRole, got, want)
	}
}

// TestRBACSubjects: every binding names the one identity the docs tell operators to mint.
func TestRBACSubjects(t *testing.T) {
	bindings := 0
	for _, doc := range rbacDocs(t) {
		var b rbacv1.RoleBinding // ClusterRoleBinding has the same shape
		if err := yaml.Unmarshal(doc, &b); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(b.Kind, "Binding") {
			continue
		}
		bindings++
		if len(b.Subjects) != 1 || b.Subjects[0].Kind != "User" || b.Subjects[0].Name != "system:pv-controller-manager" {
			t.Errorf("%s %s: subjects %+v", b.Kind, b.Name, b.Subjects)
		}
	}
	if bindings != 4 {
		t.Errorf("found %d bindings, want 4 (binder role, auth-delegator, leader election, authentication reader)", bindings)
	}
}

// TestFlowSchemas: the binder's identity gets the priority level and precedence upstream gives
// kube-controller-manager, and its Lease requests those of upstream's leader election, so that it
// is neither below upstream's binder nor above KCM's other controllers (docs/operations.md).
func TestFlowSchemas(t *testing.T) {
	schemas := map[string]flowcontrolv1.FlowSchema{}
	for _, doc := range rbacDocs(t) {
		var fs flowcontrolv1.FlowSchema
		if err := yaml.Unmarshal(doc, &fs); err != nil || fs.Kind != "FlowSchema" {
			continue
		}
		if err := yaml.UnmarshalStrict(doc, &fs); err != nil {
			t.Fatalf("FlowSchema %s: %v", fs.Name, err)
		}
		for _, rule := range fs.Spec.Rules {
			for _, s := range rule.Subjects {
				if s.Kind != flowcontrolv1.SubjectKindUser || s.User == nil || s.User.Name != "system:pv-controller-manager" {
					t.Errorf("FlowSchema %s: subject %+v, want the user system:pv-controller-manager", fs.Name, s)
				}
			}
		}
		if fs.Spec.DistinguisherMethod == nil || fs.Spec.DistinguisherMethod.Type != flowcontrolv1.FlowDistinguisherMethodByUserType {
			t.Errorf("FlowSchema %s: distinguisher %+v, want ByUser (the binder is one flow)", fs.Name, fs.Spec.DistinguisherMethod)
		}
		schemas[fs.Name] = fs
	}
	for name, upstream := range map[string]struct {
		level      string
		precedence int32
	}{
		"pv-controller-manager": {bootstrap.SuggestedFlowSchemaKubeControllerManager.Spec.PriorityLevelConfiguration.Name,
			bootstrap.SuggestedFlowSchemaKubeControllerManager.Spec.MatchingPrecedence},
		"pv-controller-manager-leader-election": {bootstrap.SuggestedFlowSchemaSystemLeaderElection.Spec.PriorityLevelConfiguration.Name,
			bootstrap.SuggestedFlowSchemaSystemLeaderElection.Spec.MatchingPrecedence},
	} {
		fs, ok := schemas[name]
		if !ok {
			t.Errorf("FlowSchema %s not found in deploy/rbac", name)
			continue
		}
		if fs.Spec.PriorityLevelConfiguration.Name != upstream.level || fs.Spec.MatchingPrecedence != upstream.precedence {
			t.Errorf("FlowSchema %s: priority level %s, precedence %d; want upstream's %s, %d", name,
				fs.Spec.PriorityLevelConfiguration.Name, fs.Spec.MatchingPrecedence, upstream.level, upstream.precedence)
		}
	}
	// The leader-election schema covers every verb the Lease client uses.
	if fs, ok := schemas["pv-controller-manager-leader-election"]; ok {
		rules := fs.Spec.Rules[0].ResourceRules
		if len(rules) != 1 || !slices.Equal(rules[0].Verbs, []string{"get", "create", "update"}) || !slices.Equal(rules[0].Resources, []string{"leases"}) {
			t.Errorf("leader-election rules %+v, want get/create/update on leases", rules)
		}
	}
}

// TestStaticPodManifest checks what the rollout promises operators about our static pod.
func TestStaticPodManifest(t *testing.T) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(StaticPodManifest, &pod); err != nil {
		t.Fatalf("static pod manifest: %v", err)
	}
	spec := pod.Spec
	if pod.Namespace != "kube-system" || !spec.HostNetwork || spec.PriorityClassName != "system-node-critical" {
		t.Errorf("want kube-system, hostNetwork, system-node-critical; got %s %v %s", pod.Namespace, spec.HostNetwork, spec.PriorityClassName)
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod must run as a non-root uid: %+v", sc)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(spec.Containers))
	}
	c := spec.Containers[0]
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container must have a read-only root filesystem and no privilege escalation: %+v", sc)
	}
	for name, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS || probe.HTTPGet.Port.IntValue() != 10267 {
			t.Errorf("%s probe must be HTTPS on the secure port 10267: %+v", name, probe)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests missing: %+v", c.Resources.Requests)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.MountPath == "/etc/kubernetes/pv-controller-manager.conf" && m.ReadOnly
	}) {
		t.Errorf("kubeconfig not mounted read-only from the host")
	}
	if !slices.Contains(c.Command, "--kubeconfig=/etc/kubernetes/pv-controller-manager.conf") {
		t.Errorf("command does not use the mounted kubeconfig: %q", c.Command)
	}
}

func rbacDocs(t *testing.T) [][]byte {
	t.Helper()
	var docs [][]byte
	err := fs.WalkDir(RBAC, "rbac", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := RBAC.ReadFile(path)
		if err != nil {
			return err
		}
		r := utilyaml.NewYAMLReader(bufioReader(data))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) > 0 {
				docs = append(docs, doc)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func ruleStrings(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+":"+v)
				}
			}
		}
		for _, u := range r.NonResourceURLs {
			for _, v := range r.Verbs {
				out = append(out, u+":"+v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// TestMonitoringKustomization: monitoring/kustomization.yaml (kubectl apply -k deploy/monitoring)
// lists every Kubernetes object of monitoring/ and is the one place of the release label that
// kube-prometheus-stack selects ServiceMonitors and PrometheusRules by: no manifest sets its own.
// hack/monitoring's TestKustomization renders it with kustomize.
func TestMonitoringKustomization(t *testing.T) {
	var k struct {
		Kind   string `json:"kind"`
		Labels []struct {
			Pairs            map[string]string `json:"pairs"`
			IncludeSelectors bool              `json:"includeSelectors"`
		} `json:"labels"`
		Resources []string `json:"resources"`
	}
	data, err := os.ReadFile("monitoring/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if k.Kind != "Kustomization" || len(k.Labels) != 1 || k.Labels[0].Pairs["release"] == "" || k.Labels[0].IncludeSelectors {
		t.Errorf("kustomization.yaml: want kind Kustomization and one labels entry with pairs.release, includeSelectors false: %+v", k)
	}
	var manifests []string
	err = filepath.WalkDir("monitoring", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || path == "monitoring/kustomization.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if obj.APIVersion == "" || obj.Kind == "" {
			return nil // rules.yaml, the promtool tests
		}
		manifests = append(manifests, strings.TrimPrefix(path, "monitoring/"))
		if v, ok := obj.Metadata.Labels["release"]; ok {
			t.Errorf("%s: sets release=%q itself; kustomization.yaml sets it", path, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(manifests)
	resources := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(manifests, resources) {
		t.Errorf("kustomization.yaml lists %q, monitoring/ holds the manifests %q", resources, manifests)
	}
}
