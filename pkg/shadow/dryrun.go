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
// write is handed to observe (with its body) before it is sent.
func DryRun(rt http.RoundTripper, observe func(Write)) http.RoundTripper {
	return &dryRunTransport{next: rt, observe: observe}
}

type dryRunTransport struct {
	next    http.RoundTripper
	observe func(Write)
}

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
	if resource, sub := pvResource(out.URL.Path); resource != "" && t.observe != nil {
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
		t.observe(Write{Method: req.Method, Resource: resource, Subresource: sub, Body: body})
	}
	return t.next.RoundTrip(out)
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
