package slack

import (
	"context"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Names and user groups are looked up once and kept: users.info for the
// name a person goes by, usergroups.users.list for the members of each
// user group approver rules name (at most groupsKept old, so that a
// person removed from a group soon stops counting as one of its members).
const (
	namesKept  = time.Hour
	groupsKept = 5 * time.Minute
	// lookupLimit bounds the lookups of one event: they hold its ack.
	lookupLimit = 800 * time.Millisecond
	// missKept is how long a name that could not be had is not asked
	// again (user_not_found, an error, a 429).
	missKept = time.Minute
)

type people struct {
	c *Connector

	mu     sync.Mutex
	names  map[string]cached[string]
	misses map[string]time.Time
	groups map[string]cached[map[string]bool]
	// noGroups is set while the workspace's plan has no user groups
	// (plan_upgrade_required): only user rules apply; said once.
	noGroups     time.Time
	saidNoGroups bool
}

type cached[T any] struct {
	v  T
	at time.Time
}

func newPeople(c *Connector) *people {
	return &people{c: c, names: map[string]cached[string]{}, misses: map[string]time.Time{}, groups: map[string]cached[map[string]bool]{}}
}

// name is the display name of user id, or "" when it cannot be had now.
func (p *people) name(ctx context.Context, id string) string {
	p.mu.Lock()
	n, ok := p.names[id]
	missed, tried := p.misses[id]
	p.mu.Unlock()
	if ok && time.Since(n.at) < namesKept || tried && time.Since(missed) < missKept {
		return n.v
	}
	// The name is looked up where Slack waits for the event's ack (after
	// the Handler has it on record): it never waits for the budget. With
	// none left now, the event goes on without a name (shown as the id).
	ctx, cancel := context.WithTimeout(ctx, lookupLimit)
	defer cancel()
	var u *slack.User
	called, err := p.c.callNow(ctx, "users.info", "", func() (err error) {
		u, err = p.c.api.GetUserInfoContext(ctx, id)
		return err
	})
	if !called || err != nil {
		p.c.log.Debug("slack: users.info", "user", id, "called", called, "err", err)
		if err != nil {
			p.mu.Lock()
			p.misses[id] = time.Now() // not asked again at once: each ask spends the budget
			p.mu.Unlock()
		}
		return n.v // an old name is better than none
	}
	name := u.Profile.DisplayName
	if name == "" {
		name = u.RealName
	}
	if name == "" {
		name = u.Name
	}
	p.mu.Lock()
	p.names[id] = cached[string]{name, time.Now()}
	p.mu.Unlock()
	return name
}

// groupsOf are the user groups of Options.UserGroups that user id is a
// member of.
func (p *people) groupsOf(ctx context.Context, id string) []string {
	var out []string
	for _, g := range p.c.opt.UserGroups {
		if p.members(ctx, g)[id] {
			out = append(out, g)
		}
	}
	return out
}

// members of user group g, from the cache when fresh.
func (p *people) members(ctx context.Context, g string) map[string]bool {
	p.mu.Lock()
	m, ok := p.groups[g]
	noGroups := time.Since(p.noGroups) < groupsKept
	p.mu.Unlock()
	if noGroups {
		return nil
	}
	if ok && time.Since(m.at) < groupsKept {
		return m.v
	}
	ctx, cancel := context.WithTimeout(ctx, lookupLimit)
	defer cancel()
	var ids []string
	// As for names: no wait for the budget where the ack waits. With none
	// left now, the last list known stands (none: not a member, so the
	// vote is refused in words and a second press counts).
	called, err := p.c.callNow(ctx, "usergroups.users.list", "", func() (err error) {
		ids, err = p.c.api.GetUserGroupMembersContext(ctx, g)
		return err
	})
	if !called {
		return m.v
	}
	if hasCode(err, "plan_upgrade_required") {
		p.mu.Lock()
		p.noGroups = time.Now()
		said := p.saidNoGroups
		p.saidNoGroups = true
		p.mu.Unlock()
		if !said {
			p.c.log.Warn("slack: this workspace's plan has no user groups (plan_upgrade_required): approver rules by slack.user_groups match nobody; only slack.users apply")
		}
		return nil
	}
	if err != nil {
		p.c.log.Warn("slack: could not list a user group's members; its members count as not in it for now", "group", g, "err", err)
		return m.v
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	p.mu.Lock()
	p.groups[g] = cached[map[string]bool]{set, time.Now()}
	p.mu.Unlock()
	return set
}
