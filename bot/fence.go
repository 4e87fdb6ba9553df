package bot

import (
	"sync/atomic"

	"github.com/opsbot/opsbot/connectors"
)

// postFence is the check every post, edit and stream of the Platforms
// passes first (ha: the leadership); nil or unset lets all through.
type postFence struct {
	check atomic.Pointer[func() error]
}

// err is why nothing may reach a platform now, or nil.
func (f *postFence) err() error {
	if f == nil {
		return nil
	}
	if fn := f.check.Load(); fn != nil {
		return (*fn)()
	}
	return nil
}

// Fence has every request that posts to a platform (a post, an edit, a
// stream, a status) ask check first: while it returns an error nothing
// reaches the platform and the caller gets that error. In ha, check is
// the leadership: a deposed leader posts nothing its successor may post
// again.
func (p *Platforms) Fence(check func() error) { p.fence.check.Store(&check) }

// fenced is ref and the fence's error, for the Post-shaped methods.
func fenced(f *postFence) (connectors.Ref, error) { return connectors.Ref{}, f.err() }
