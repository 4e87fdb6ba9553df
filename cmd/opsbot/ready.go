package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"
)

// readyTimeout bounds each readiness check: a database that does not
// answer within it is down, whatever the reason.
const readyTimeout = time.Second

// readiness is the set of named checks /readyz runs. Any component may add
// one: the database and each connector are added by the composition root,
// the sandbox adds its own.
type readiness struct {
	mu      sync.Mutex
	checks  []readyCheck
	details []readyDetail
}

// readyDetail is a line /readyz shows that does not decide readiness
// (the sandbox's state).
type readyDetail struct {
	name string
	fn   func() (ok bool, detail string)
}

// Detail registers a line shown under details in /readyz's body.
func (r *readiness) Detail(name string, fn func() (ok bool, detail string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.details = append(r.details, readyDetail{name, fn})
}

type readyCheck struct {
	name string
	fn   func(ctx context.Context) error
}

// Add registers a check named name (what /readyz shows when it fails); fn
// returns nil when the part is ready. Safe at any time.
func (r *readiness) Add(name string, fn func(ctx context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, readyCheck{name, fn})
}

// readyReport is /readyz's JSON body.
type readyReport struct {
	// Status is "ready" or "not ready".
	Status string `json:"status"`
	// Checks maps each check's name to "ok" or what is wrong.
	Checks map[string]string `json:"checks"`
	// Down names the checks that failed, sorted.
	Down []string `json:"down,omitempty"`
	// Details are lines that inform but do not decide readiness.
	Details map[string]string `json:"details,omitempty"`
}

// check runs every check at once, each bounded by readyTimeout.
func (r *readiness) check(ctx context.Context) readyReport {
	r.mu.Lock()
	list := append([]readyCheck(nil), r.checks...)
	details := append([]readyDetail(nil), r.details...)
	r.mu.Unlock()
	results := make([]error, len(list))
	var wg sync.WaitGroup
	for i, c := range list {
		wg.Go(func() { results[i] = runCheck(ctx, c.fn) })
	}
	wg.Wait()
	rep := readyReport{Status: "ready", Checks: map[string]string{}}
	for i, c := range list {
		if results[i] == nil {
			rep.Checks[c.name] = "ok"
			continue
		}
		rep.Checks[c.name] = results[i].Error()
		rep.Down = append(rep.Down, c.name)
	}
	if len(rep.Down) > 0 {
		rep.Status = "not ready"
		sort.Strings(rep.Down)
	}
	for _, d := range details {
		if rep.Details == nil {
			rep.Details = map[string]string{}
		}
		_, rep.Details[d.name] = d.fn()
	}
	return rep
}

// runCheck runs fn with a deadline and stops waiting for it there, even
// when fn does not heed its context (a database stuck in a syscall).
func runCheck(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err := <-done:
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			return errNoAnswer
		}
		return err
	case <-ctx.Done():
		return errNoAnswer
	}
}

var errNoAnswer = fmt.Errorf("no answer within %s", readyTimeout)

// ServeHTTP is /readyz: 200 when every check passes, 503 naming what is
// down otherwise; the body is a readyReport either way.
func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rep := r.check(req.Context())
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if len(rep.Down) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(rep) // the prober went away if this fails
}
