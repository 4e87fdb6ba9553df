// Package leasetest is a minimal Kubernetes Lease API for tests: GET,
// POST and PUT of coordination.k8s.io/v1 Leases, a resourceVersion
// conflict answered 409 as the API server does, a bearer token checked,
// and a switch that refuses one holder's writes (a partition).
package leasetest

import (
	"encoding/json"
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
}

// New returns a Server that requires the bearer token (none when "").
func New(token string) *Server {
	return &Server{token: token, leases: map[string]leader.Lease{}, refused: map[string]bool{}, changed: make(chan struct{})}
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

// ServeHTTP is the Lease API under /apis/coordination.k8s.io/v1/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
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
	close(s.changed)
	s.changed = make(chan struct{})
	if !update {
		w.WriteHeader(http.StatusCreated)
	}
	json.NewEncoder(w).Encode(l)
}
