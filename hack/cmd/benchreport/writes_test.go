package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestClientOf(t *testing.T) {
	for ua, want := range map[string]string{
		"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc1234/pvc-protection-controller": "pvc-protection-controller",
		"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc1234/persistent-volume-binder":  "persistent-volume-binder",
		"pv-controller-manager/v0.1.0 (linux/amd64) kubernetes/0123abc/persistent-volume-binder":     "persistent-volume-binder",
		"pv-load/v0.0.0 (linux/amd64) kubernetes/$Format":                                            "pv-load",
		"": "unknown",
	} {
		if got := clientOf(ua); got != want {
			t.Errorf("clientOf(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestCountAuditWrites(t *testing.T) {
	log := `{"kind":"Event","verb":"update","userAgent":"x/v1 (linux/amd64) kubernetes/abc/persistent-volume-binder","objectRef":{"resource":"persistentvolumes","name":"a"},"responseStatus":{"code":200}}
{"kind":"Event","verb":"update","userAgent":"x/v1 (linux/amd64) kubernetes/abc/persistent-volume-binder","objectRef":{"resource":"persistentvolumes","name":"a"},"responseStatus":{"code":409}}
{"kind":"Event","verb":"update","userAgent":"kcm/v1 (linux/amd64) kubernetes/abc/pvc-protection-controller","objectRef":{"resource":"persistentvolumeclaims","subresource":"status"},"responseStatus":{"code":200}}
{"kind":"Event","verb":"create","userAgent":"pv-load/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"persistentvolumes"},"responseStatus":{"code":201}}
{"kind":"Event","verb":"get","userAgent":"pv-load/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"persistentvolumes"},"responseStatus":{"code":200}}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := countAuditWrites(path)
	if err != nil {
		t.Fatal(err)
	}
	want := writeCounts{
		"persistent-volume-binder":  {"pv update": 2, "pv update 409": 1},
		"pvc-protection-controller": {"pvc/status update": 1},
		"pv-load":                   {"pv create": 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("countAuditWrites = %v, want %v", got, want)
	}
	if err := os.WriteFile(path, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := countAuditWrites(path); err == nil {
		t.Error("a line that is not JSON: want an error")
	}
}

func TestApiserverWrites(t *testing.T) {
	sample := func(resource, sub, verb string, v float64) promSample {
		return promSample{name: "apiserver_request_total", value: v,
			labels: map[string]string{"resource": resource, "subresource": sub, "verb": verb, "code": "200"}}
	}
	before := []promSample{sample("persistentvolumes", "status", "PUT", 10)}
	after := []promSample{
		sample("persistentvolumes", "status", "PUT", 30),
		sample("persistentvolumeclaims", "", "PUT", 20),
		sample("persistentvolumeclaims", "", "POST", 20), // the workload's creates: left out
		sample("pods", "", "PUT", 5),                     // not a PV or a claim
	}
	if got, want := apiserverWrites(before, after, 20), "**2.00** (pv/status PUT 1.00, pvc PUT 1.00)"; got != want {
		t.Errorf("apiserverWrites = %q, want %q", got, want)
	}
	if got := apiserverWrites(before, before, 20); got != "" {
		t.Errorf("no writes: got %q, want none", got)
	}
}
