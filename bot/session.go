package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// session finds or creates the thread's session, with its working
// directory.
func (b *Bot) session(ctx context.Context, ev connectors.Event) (agent.SessionInfo, error) {
	s, _, err := b.Store.SessionFor(ctx, store.ThreadKey{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread})
	if err != nil {
		return agent.SessionInfo{}, err
	}
	if s.Cwd == "" {
		dir, err := filepath.Abs(filepath.Join(b.Config.WithDefaults().DataDir, "sessions", strconv.FormatInt(s.ID, 10)))
		if err != nil {
			return agent.SessionInfo{}, err
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return agent.SessionInfo{}, fmt.Errorf("bot: session directory: %w", err)
		}
		if err := b.Store.SetSessionCwd(ctx, s.ID, dir); err != nil {
			return agent.SessionInfo{}, err
		}
		s.Cwd = dir
	}
	return agent.SessionInfo{ID: s.ID, Requester: ev.User.ID, Cwd: s.Cwd, Platform: ev.Platform, Channel: ev.Channel}, nil
}
