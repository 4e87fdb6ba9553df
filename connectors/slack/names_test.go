package slack_test

import (
	"fmt"
	"testing"

	"github.com/opsbot/opsbot/connectors/slack"
)

// A person's name is looked up where Slack waits for the event's ack: a
// name that cannot be had (a user Slack does not know, a spent users.info
// budget) is not asked again for every event, and never holds the acks
// up. 40 mentions by one unknown person asked users.info 40 times and
// held the last ack 24 s on a budget wait.
func TestUnknownNameIsNotAskedForEveryEvent(t *testing.T) {
	t.Parallel()
	r := startRig(t, slack.Config{}, slack.Options{})
	var envelopes []string
	for i := range 40 {
		m := r.fake.Mention("C0OPS", "U0NOBODY", "", fmt.Sprintf("why is web-%d slow?", i))
		envelopes = append(envelopes, m.Envelopes...)
	}
	for _, id := range envelopes {
		r.acked(t, id)
	}
	for range 40 {
		if ev := r.next(t); ev.User.ID != "U0NOBODY" || ev.User.Name != "" {
			t.Errorf("the mention came from %+v; want the id without a name", ev.User)
		}
	}
	if n := r.fake.Calls("users.info"); n != 1 {
		t.Errorf("users.info asked %d times for one unknown person; want once", n)
	}
}
