package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// A Stop undoes the turn but not what an approved command changed: the
// next turn's request still says the touch ran, so the model does not do
// it again.
func TestStopKeepsARecordOfChanges(t *testing.T) {
	t.Parallel()
	eachWire(t, func(t *testing.T, w wire) {
		f, p := w.model(t,
			testfake.Use("c1", "", "run_command", run("web-1", "touch /tmp/x"), "run_command", run("web-1", "sleep 30")),
			testfake.Say("OK."))
		h, sess := sqliteSession(t)
		ctx, cancel := context.WithCancel(context.Background())
		fl := &fleet{outputs: map[string]string{}, during: func(c context.Context, command string) {
			if command == "sleep 30" {
				cancel() // the person presses Stop while it runs
				<-c.Done()
			}
		}}
		a := investigator(p, h, fl)
		if err := a.Turn(ctx, sess, "touch it and wait", (&testfake.Recorder{}).Emit); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want cancelled", err)
		}
		if err := a.Turn(context.Background(), sess, "what did you do?", (&testfake.Recorder{}).Emit); err != nil {
			t.Fatal(err)
		}
		texts := fmt.Sprint(w.userTexts(f.Requests()[1].Body))
		if !strings.Contains(texts, "ran on web-1 before the stop: `touch /tmp/x`, exit 0") {
			t.Errorf("the next request does not record the touch: %s", texts)
		}
		if strings.Contains(texts, "touch it and wait") {
			t.Errorf("the stopped turn was not rolled back: %s", texts)
		}
	})
}
