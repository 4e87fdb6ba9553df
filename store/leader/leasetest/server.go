// Package leasetest is a minimal Kubernetes Lease API for tests: GET,
// POST and PUT of coordination.k8s.io/v1 Leases, a resourceVersion
// conflict answered 409 as the API server does, a bearer token checked,
// and a switch that refuses one holder's writes (a partition). It also
// serves the pods a test adds, for a merge patch of their labels.
package leasetest

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/opsbot/opsbot/store/leader"
)

// Server serves Leases in memory; its zero value is not usable: New.
type Server struct {
	token string

	mu      sync.Mutex
	leases  map[string]leader.Lease // by namespace/name
	version int
	refused map[string]bool
	changed chan struct{}
	pods    map[string]map[string]string // labels by namespace/name
	notes   map[string]map[string]string // annotations by namespace/name
}

// New returns a Server that requires the bearer token (none when "").
func New(token string) *Server {
	return &Server{token: token, leases: map[string]leader.Lease{}, refused: map[string]bool{}, changed: make(chan struct{}), pods: map[string]map[string]string{}, notes: map[string]map[string]string{}}
}

// Refuse makes the Server answer 503 to every write naming holder as the
// Lease's holder (its renewals), or stop doing so.
func (s *Server) Refuse(holder string, refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[holder] = refuse
}

// Lease returns the stored Lease namespace/name, if there is one, and a
// channel closed at its next change.
func (s *Server) Lease(namespace, name string) (leader.Lease, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[namespace+"/"+name]
	return l, ok, s.changed
}

// AddPod makes the pod namespace/name known (a patch of an unknown pod is
// answered 404); a pod added again keeps its labels, as a restarted
// container keeps its pod.
func (s *Server) AddPod(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pods[namespace+"/"+name]; !ok {
		s.pods[namespace+"/"+name] = map[string]string{}
		s.notes[namespace+"/"+name] = map[string]string{}
	}
	s.notify()
}

// PodLabels returns a copy of the labels of the pod namespace/name (nil
// when it is unknown), and a channel closed at the next change of a pod
// or a Lease.
func (s *Server) PodLabels(namespace, name string) (map[string]string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	labels, ok := s.pods[namespace+"/"+name]
	if !ok {
		return nil, s.changed
	}
	return maps.Clone(labels), s.changed
}

// PodAnnotations returns a copy of the annotations of the pod
// namespace/name (nil when it is unknown).
func (s *Server) PodAnnotations(namespace, name string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.notes[namespace+"/"+name])
}

// ServeHTTP is the Lease API under /apis/coordination.k8s.io/v1/ and the
// pods' PATCH under /api/v1/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if pod, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/"); ok {
		s.patchPod(w, r, pod)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/coordination.k8s.io/v1/namespaces/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) < 2 || parts[1] != "leases" {
		http.NotFound(w, r)
		return
	}
	ns := parts[0]
	switch {
	case r.Method == http.MethodGet && len(parts) == 3:
		s.get(w, ns+"/"+parts[2])
	case r.Method == http.MethodPost && len(parts) == 2:
		s.write(w, r, ns, false)
	case r.Method == http.MethodPut && len(parts) == 3:
		s.write(w, r, ns, true)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (s *Server) get(w http.ResponseWriter, key string) {
	s.mu.Lock()
	l, ok := s.leases[key]
	s.mu.Unlock()
	if !ok {
		http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(l)
}

// write creates (update false) or replaces a Lease, at its
// resourceVersion.
func (s *Server) write(w http.ResponseWriter, r *http.Request, ns string, update bool) {
	var l leader.Lease
	if err := json.NewDecoder(r.Body).Decode(&l); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key := ns + "/" + l.Metadata.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists := s.leases[key]
	switch {
	case s.refused[l.Spec.HolderIdentity] || s.refused[old.Spec.HolderIdentity] && update && l.Spec.HolderIdentity == old.Spec.HolderIdentity:
		http.Error(w, "refused", http.StatusServiceUnavailable)
		return
	case !update && exists, update && exists && l.Metadata.ResourceVersion != old.Metadata.ResourceVersion:
		http.Error(w, `{"kind":"Status","code":409}`, http.StatusConflict)
		return
	case update && !exists:
		http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
		return
	}
	s.version++
	l.Metadata.Namespace, l.Metadata.ResourceVersion = ns, strconv.Itoa(s.version)
	s.leases[key] = l
	s.notify()
	if !update {
		w.WriteHeader(http.StatusCreated)
	}
	json.NewEncoder(w).Encode(l)
}

// notify closes the channel Lease and PodLabels gave out; s.mu is held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// patchPod applies a JSON merge patch of metadata.labels and
// metadata.annotations to the pod at path ({ns}/pods/{name}); a null
// value removes the key.
func (s *Server) patchPod(w http.ResponseWriter, r *http.Request, path string) {
	parts := strings.Split(path, "/")
	if len(parts) != 3 || parts[1] != "pods" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPatch {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/merge-patch+json" {
		http.Error(w, "unsupported patch type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var patch struct {
		Metadata struct {
			Labels      map[string]*string `json:"labels"`
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key := parts[0] + "/" + parts[2]
	s.mu.Lock()
	defer s.mu.Unlock()
	labels, ok := s.pods[key]
	if !ok {
		http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
		return
	}
	merge := func(into map[string]string, patch map[string]*string) {
		for k, v := range patch {
			if v == nil {
				delete(into, k)
			} else {
				into[k] = *v
			}
		}
	}
	merge(labels, patch.Metadata.Labels)
	merge(s.notes[key], patch.Metadata.Annotations)
	s.notify()
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": parts[2], "namespace": parts[0], "labels": labels, "annotations": s.notes[key]}})
}
