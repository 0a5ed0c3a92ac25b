package shadow

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// A dry run is never stored, so it never changes what the binder's informers see. Every time the
// binder syncs a volume or a claim again from the informer's copy (an event on it, such as a write
// of KCM's binder; the binder's periodic resync of objects that are not Bound yet, every
// --pvclaimbinder-sync-period; the informer's own resync), the stored object replaces the state
// its dry-run answer left in the binder's cache, and the binder decides and writes again what it
// already wrote. Beside a KCM that takes minutes to bind a batch, that is a bind's writes again on
// every sync period while a pair waits for KCM, and, when KCM has meanwhile written the object,
// answered 409 (the binder wrote at the resourceVersion it had).
//
// repeats remembers, per object and per kind of write (the object, or its status), the content
// of the dry-run writes the apiserver accepted: the fields the write sets (for an object write
// its metadata and spec, for a status write its status), leaving out what only the server or
// the object's age decides (resourceVersion, managedFields, generation, the time of a phase
// change, the resourceVersion of the claim a volume's claimRef names). A write whose content was
// already accepted for that object is answered here, as the apiserver answered the first one: the
// object as written, at the resourceVersion the binder sent. So the binder's cache takes the
// same state again and goes on from it, and the apiserver sees each decision once per change of
// the objects it depends on (a change that changes what the binder writes is new content).
type repeats struct {
	mu   sync.Mutex
	seen map[string]*objectWrites // "resource/subresource/namespace/name"
}

// maxContentsPerObject bounds what is remembered per object and kind of write: a volume or claim
// goes through a handful of states, and the oldest is forgotten first.
const maxContentsPerObject = 8

type objectWrites struct {
	uid      string
	contents [][sha256.Size]byte
}

func newRepeats() *repeats { return &repeats{seen: map[string]*objectWrites{}} }

// pvWrite is a PUT of a volume or a claim (or of its status), parsed for repeats.
type pvWrite struct {
	key, uid string
	content  [sha256.Size]byte
	object   map[string]any // the body as sent, for a local answer
	kind     string
}

// parsePVWrite returns the write's key and content, or nil when it is not a PUT of one volume or
// claim with a JSON body that names it (those are always sent).
func parsePVWrite(method, resource, subresource string, body []byte) *pvWrite {
	if method != http.MethodPut || len(body) == 0 || (subresource != "" && subresource != "status") {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		return nil
	}
	namespace, _ := meta["namespace"].(string)
	uid, _ := meta["uid"].(string)
	// What the write sets: the apiserver keeps the stored status on an object write and the stored
	// spec on a status write.
	var decided map[string]any
	if subresource == "status" {
		status, _ := obj["status"].(map[string]any)
		status = shallowCopy(status)
		delete(status, "lastPhaseTransitionTime") // the apiserver's, on a phase change
		// With the binding it reports: the volume's claim, the claim's volume.
		spec, _ := obj["spec"].(map[string]any)
		var bound any = spec["volumeName"]
		if ref, ok := spec["claimRef"].(map[string]any); ok {
			bound = []any{ref["namespace"], ref["name"], ref["uid"]}
		}
		decided = map[string]any{"uid": uid, "status": status, "bound": bound}
	} else {
		m := shallowCopy(meta)
		for _, k := range []string{"resourceVersion", "managedFields", "generation"} {
			delete(m, k)
		}
		spec, _ := obj["spec"].(map[string]any)
		spec = shallowCopy(spec)
		if ref, ok := spec["claimRef"].(map[string]any); ok {
			// The claim's version when the binder read it: KCM's writes to the claim change it,
			// not the decision (the claim's UID stays).
			ref = shallowCopy(ref)
			delete(ref, "resourceVersion")
			spec["claimRef"] = ref
		}
		decided = map[string]any{"metadata": m, "spec": spec}
	}
	canonical, err := json.Marshal(decided) // map keys sorted: one encoding per content
	if err != nil {
		return nil
	}
	kind := "PersistentVolume"
	if resource == "persistentvolumeclaims" {
		kind = "PersistentVolumeClaim"
	}
	return &pvWrite{
		key:     resource + "/" + subresource + "/" + namespace + "/" + name,
		uid:     uid,
		content: sha256.Sum256(canonical),
		object:  obj,
		kind:    kind,
	}
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// accepted reports whether w's content was already accepted for its object.
func (r *repeats) accepted(w *pvWrite) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.seen[w.key]
	if o == nil || o.uid != w.uid {
		return false
	}
	for _, c := range o.contents {
		if c == w.content {
			return true
		}
	}
	return false
}

// accept remembers w's content for its object (the apiserver accepted it).
func (r *repeats) accept(w *pvWrite) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.seen[w.key]
	if o == nil || o.uid != w.uid {
		o = &objectWrites{uid: w.uid}
		r.seen[w.key] = o
	}
	for _, c := range o.contents {
		if c == w.content {
			return
		}
	}
	if len(o.contents) == maxContentsPerObject {
		o.contents = o.contents[1:]
	}
	o.contents = append(o.contents, w.content)
}

// forget drops what is remembered of a volume or claim (deleted: a namesake starts afresh).
func (r *repeats) forget(resource, namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sub := range []string{"", "status"} {
		delete(r.seen, resource+"/"+sub+"/"+namespace+"/"+name)
	}
}

// len is the number of objects and kinds of write remembered.
func (r *repeats) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// answer is the apiserver's answer to a repeated write, given here: the object as written, at the
// resourceVersion it was written at (a dry run's answer keeps the stored version).
func (w *pvWrite) answer(req *http.Request) (*http.Response, error) {
	obj := shallowCopy(w.object)
	obj["apiVersion"], obj["kind"] = "v1", w.kind
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}, "Content-Length": []string{strconv.Itoa(len(body))}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}
