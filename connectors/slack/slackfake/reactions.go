package slackfake

import (
	"net/url"
	"slices"
	"time"
)

// Reaction is a reactions.add or reactions.remove call Slack took, at the
// fake's clock.
type Reaction struct {
	Channel, TS, Name string
	// Added: reactions.add; else reactions.remove.
	Added bool
	At    time.Time
}

// react serves reactions.add and reactions.remove as Slack does: the
// message must exist; a reaction the bot already made is
// already_reacted, one it did not make no_reaction.
func (s *Server) react(method string, f url.Values) reply {
	channel, ts, name := f.Get("channel"), f.Get("timestamp"), f.Get("name")
	if channel == "" || ts == "" || name == "" {
		return fail("invalid_arguments")
	}
	m := s.find(channel, ts)
	if m == nil {
		return fail("message_not_found")
	}
	has := slices.Contains(m.Reactions, name)
	add := method == "reactions.add"
	switch {
	case add && has:
		return fail("already_reacted")
	case !add && !has:
		return fail("no_reaction")
	case add:
		m.Reactions = append(m.Reactions, name)
	default:
		m.Reactions = slices.DeleteFunc(m.Reactions, func(r string) bool { return r == name })
	}
	s.reacted = append(s.reacted, Reaction{Channel: channel, TS: ts, Name: name, Added: add, At: s.Now()})
	return reply{"ok": true}
}

// Reactions are the reactions.add and reactions.remove calls Slack took,
// in order.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reacted)
}
