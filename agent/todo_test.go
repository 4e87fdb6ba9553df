package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent/internal/testfake"
	"github.com/opsbot/opsbot/agent/tools"
)

// A model that never used the todo tool is never reminded of it, and no
// reminder is ever sent as the person's words.
func TestNoTodoReminderWithoutATodoList(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		var turns []testfake.Turn
		for i := range 7 {
			turns = append(turns, testfake.Use(fmt.Sprintf("c%d", i), "", "run_command", run("web-1", "uptime")))
		}
		f, p := w.model(t, append(turns, testfake.Say("Fine."))...)
		h, sess := sqliteSession(t)
		a := investigator(p, h, &fleet{outputs: map[string]string{"uptime": "up"}})
		a.Tools.Add(tools.NewTodo())
		if err := a.Turn(context.Background(), sess, "watch web-1", (&testfake.Recorder{}).Emit); err != nil {
			t.Fatal(err)
		}
		for i, r := range f.Requests() {
			all := fmt.Sprint(w.userTexts(r.Body), w.results(r.Body))
			if strings.Contains(strings.ToLower(all), "todo") {
				t.Errorf("request %d mentions todos: %s", i+1, all)
			}
		}
	})
}
