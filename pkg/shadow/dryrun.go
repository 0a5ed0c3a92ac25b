package shadow

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// Write is one write of the binder, as the dry-run transport saw it before sending it.
type Write struct {
	Method string
	// Resource is "persistentvolumes" or "persistentvolumeclaims" ("" for any other), and
	// Subresource "status" or "".
	Resource, Subresource string
	// Body is the request's body (JSON: the shadow's client sends JSON).
	Body []byte
}

// DryRun wraps rt: every request that is not a read goes out with dryRun=All, and each PV or PVC
// write is handed to observe (with its body) before it is sent. A PUT of a volume or a claim whose
// content the apiserver already accepted for that object is answered without sending it (repeats).
func DryRun(rt http.RoundTripper, observe func(Write)) http.RoundTripper {
	return NewDryRunWrites(observe).Wrap(rt)
}

// DryRunWrites makes the shadow's dry-run transports (Wrap); they share what they remember of the
// writes the apiserver accepted.
type DryRunWrites struct {
	observe func(Write)
	repeats *repeats
}

// NewDryRunWrites returns the DryRunWrites whose transports hand each PV or PVC write to observe.
func NewDryRunWrites(observe func(Write)) *DryRunWrites {
	registerTransportMetrics()
	return &DryRunWrites{observe: observe, repeats: newRepeats()}
}

// Wrap returns the dry-run transport over rt (a rest.Config's WrapTransport).
func (d *DryRunWrites) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &dryRunTransport{next: rt, DryRunWrites: d}
}

// Forget drops what is remembered of the writes to a deleted volume (namespace "") or claim, so
// that memory follows the live objects and a namesake is written afresh.
func (d *DryRunWrites) Forget(resource, namespace, name string) {
	d.repeats.forget(resource, namespace, name)
}

type dryRunTransport struct {
	next http.RoundTripper
	*DryRunWrites
}

// RoundTrip implements http.RoundTripper.
func (t *dryRunTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.next.RoundTrip(req)
	}
	// RoundTrippers must not modify the request: work on a clone.
	out := req.Clone(req.Context())
	q := out.URL.Query()
	q.Set("dryRun", "All")
	out.URL.RawQuery = q.Encode()
	resource, sub := pvResource(out.URL.Path)
	if resource == "" {
		return t.next.RoundTrip(out)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if t.observe != nil {
		t.observe(Write{Method: req.Method, Resource: resource, Subresource: sub, Body: body})
	}
	w := parsePVWrite(req.Method, resource, sub, body)
	if w != nil && t.repeats.accepted(w) {
		dryRunWritesTotal.WithLabelValues(resource, sub, resultRepeat).Inc()
		return w.answer(req)
	}
	dryRunWritesTotal.WithLabelValues(resource, sub, resultSent).Inc()
	resp, err := t.next.RoundTrip(out)
	if err == nil && w != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		t.repeats.accept(w)
	}
	return resp, err
}

// pvResource parses /api/v1/persistentvolumes/NAME[/status] and
// /api/v1/namespaces/NS/persistentvolumeclaims/NAME[/status] (and the collections).
func pvResource(path string) (resource, subresource string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 3 || parts[0] != "api" || parts[1] != "v1" {
		return "", ""
	}
	rest := parts[2:]
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	switch rest[0] {
	case "persistentvolumes", "persistentvolumeclaims":
		if len(rest) == 3 {
			return rest[0], rest[2]
		}
		return rest[0], ""
	}
	return "", ""
}
