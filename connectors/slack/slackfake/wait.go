package slackfake

import (
	"time"
)

// WaitFor waits until cond, checked with the fake's state locked after
// every change, holds; false when timeout passed first (a guard against
// a hang, not a pace).
func (s *Server) WaitFor(timeout time.Duration, cond func(s *Server) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		changed := s.changedCh()
		s.mu.Unlock()
		if cond(s) {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return cond(s)
		}
	}
}

// changedCh is closed at the next change; s.mu is held.
func (s *Server) changedCh() chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// bump wakes every WaitFor; s.mu is held.
func (s *Server) bump() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// ThreadText is every message of a thread as shown, one per line, the
// bot's marked "opsbot:" — what a person reading the thread sees.
func (s *Server) ThreadText(channel, thread string) string {
	var out string
	for _, m := range s.Thread(channel, thread) {
		who := m.User
		if m.Bot {
			who = "opsbot"
		}
		out += who + ": " + m.Shown()
		if c := m.Context(); c != "" {
			out += "\n    (" + c + ")"
		}
		if b := m.Buttons(); len(b) > 0 {
			out += "\n    [buttons: " + joinComma(b) + "]"
		}
		out += "\n"
	}
	return out
}

func joinComma(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
