package shadow

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

type recordingTransport struct {
	got  []*http.Request
	body []string
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	b := ""
	if req.Body != nil {
		raw, _ := io.ReadAll(req.Body)
		b = string(raw)
	}
	r.body = append(r.body, b)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func TestDryRunMarksEveryWriteAndObservesVolumeAndClaimWrites(t *testing.T) {
	next := &recordingTransport{}
	var seen []Write
	rt := DryRun(next, func(w Write) { seen = append(seen, w) })
	do := func(method, path, body string) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, "https://apiserver"+path+"?timeout=10s", r)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if req.URL.Query().Get("dryRun") != "" {
			t.Errorf("%s %s: the caller's request was modified", method, path)
		}
	}
	do(http.MethodGet, "/api/v1/persistentvolumes", "")
	do(http.MethodPut, "/api/v1/persistentvolumes/pv-1", `{"metadata":{"name":"pv-1"}}`)
	do(http.MethodPut, "/api/v1/namespaces/ns/persistentvolumeclaims/c-1/status", `{"metadata":{"name":"c-1"}}`)
	do(http.MethodPost, "/api/v1/namespaces/ns/events", `{"reason":"x"}`)
	do(http.MethodDelete, "/api/v1/persistentvolumes/pv-2", "")

	wantDry := []bool{false, true, true, true, true}
	for i, req := range next.got {
		q := req.URL.Query()
		if (q.Get("dryRun") == "All") != wantDry[i] {
			t.Errorf("request %d %s %s: dryRun=%q, want dry run %t", i, req.Method, req.URL.Path, q.Get("dryRun"), wantDry[i])
		}
		if q.Get("timeout") != "10s" {
			t.Errorf("request %d: the other parameters were lost: %s", i, req.URL.RawQuery)
		}
	}
	if next.body[1] != `{"metadata":{"name":"pv-1"}}` {
		t.Errorf("the observed body did not reach the apiserver: %q", next.body[1])
	}
	want := []Write{
		{Method: http.MethodPut, Resource: "persistentvolumes", Body: []byte(`{"metadata":{"name":"pv-1"}}`)},
		{Method: http.MethodPut, Resource: "persistentvolumeclaims", Subresource: "status", Body: []byte(`{"metadata":{"name":"c-1"}}`)},
		{Method: http.MethodDelete, Resource: "persistentvolumes"},
	}
	if len(seen) != len(want) {
		t.Fatalf("observed %d writes, want %d (volumes and claims only): %+v", len(seen), len(want), seen)
	}
	for i := range want {
		if seen[i].Method != want[i].Method || seen[i].Resource != want[i].Resource || seen[i].Subresource != want[i].Subresource || string(seen[i].Body) != string(want[i].Body) {
			t.Errorf("write %d: %+v, want %+v", i, seen[i], want[i])
		}
	}
}
