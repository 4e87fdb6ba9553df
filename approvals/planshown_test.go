package approvals

import (
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/policy"
)

// A plan's approval reads, wherever people see it, as its goal, its
// number of steps and its targets; a command reads as itself.
func TestShownSaysAPlanByItsGoal(t *testing.T) {
	t.Parallel()
	p := Plan{Goal: "restart the app", Steps: []PlanStep{{Target: "web-1", Command: "systemctl stop app"},
		{Target: "web-2", Command: "systemctl start app"}, {Target: "web-1", Command: "curl -s localhost"}}}
	if got, want := Shown(p.Canonical()), "plan: restart the app (3 steps on web-1, web-2)"; got != want {
		t.Errorf("Shown = %q, want %q", got, want)
	}
	if got := Shown("systemctl restart nginx"); got != "systemctl restart nginx" {
		t.Errorf("a command is shown as %q", got)
	}
	c := NewCard(Approval{ID: "a1", Host: "web-1,web-2", Command: p.Canonical(), ExpiresAt: time.Now()}, policy.DisplayOptions{})
	if strings.Contains(c.Command.Text, "opsbot plan v1") || !strings.Contains(c.Command.Text, "plan: restart the app") {
		t.Errorf("a plan's card shows %q", c.Command.Text)
	}
}
