package bot

import (
	"testing"

	"github.com/opsbot/opsbot/approvals"
)

// An approval card names a directory only when one was chosen: the
// thread's own session directory, where every local command runs, is
// the bot's internal path and not shown (issue 33's try-out found
// "Directory: /var/lib/opsbot/sessions/2" on a card).
func TestCardShowsOnlyAChosenDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cwd  string
		show bool
	}{
		{"/var/lib/opsbot/sessions/2", false},
		{"/var/lib/opsbot/sessions/3", true}, // another thread's: not this one's own
		{"/srv/app", true},
		{"", false},
	} {
		m := cardMessage(approvals.Approval{ID: "a1", SessionID: 2, Host: "local", Command: "rm -rf build", Cwd: c.cwd,
			Requester: "web:alice", State: approvals.ApprovalPending}, "")
		shown := false
		for _, f := range m.Fields {
			if f.Title == "Directory" {
				shown = f.Value == c.cwd
			}
		}
		if shown != c.show {
			t.Errorf("directory %q: shown %v; want %v (%+v)", c.cwd, shown, c.show, m.Fields)
		}
	}
}
