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

// sessions opens threads' sessions, each with its working directory under
// dataDir.
type sessions struct {
	// find finds or makes a thread's session; setCwd records its
	// directory (the store's SessionFor and SetSessionCwd).
	find    func(ctx context.Context, key store.ThreadKey) (store.Session, bool, error)
	setCwd  func(ctx context.Context, id int64, cwd string) error
	dataDir string
}

// sessionLookup finds a session by its thread or its id.
type sessionLookup interface {
	SessionFor(ctx context.Context, key store.ThreadKey) (store.Session, bool, error)
	Session(ctx context.Context, id int64) (store.Session, error)
}

// open finds or creates the thread's session, with its working directory.
func (s sessions) open(ctx context.Context, ev connectors.Event) (agent.SessionInfo, error) {
	sess, _, err := s.find(ctx, store.ThreadKey{Platform: ev.Platform, Workspace: ev.Workspace, Channel: ev.Channel, Thread: ev.Thread})
	if err != nil {
		return agent.SessionInfo{}, err
	}
	if sess.Cwd == "" {
		dir, err := filepath.Abs(filepath.Join(s.dataDir, "sessions", strconv.FormatInt(sess.ID, 10)))
		if err != nil {
			return agent.SessionInfo{}, err
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return agent.SessionInfo{}, fmt.Errorf("bot: session directory: %w", err)
		}
		if err := s.setCwd(ctx, sess.ID, dir); err != nil {
			return agent.SessionInfo{}, err
		}
		sess.Cwd = dir
	}
	return agent.SessionInfo{ID: sess.ID, Requester: ev.User.ID, Cwd: sess.Cwd, Platform: ev.Platform, Channel: ev.Channel}, nil
}
