package checks

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// Each mention a person might write in notify that would never ping is
// refused at its key, with what to write instead; the mentions Slack and
// Discord notify pass.
func TestValidateNotifyMentions(t *testing.T) {
	t.Parallel()
	both := []Destination{{"slack", "C0123456789"}, {"discord", "123456789012345678"}}
	tests := []struct {
		mention string
		says    string // "" for a mention that passes
	}{
		{"<!subteam^S0123456789>", ""},
		{"<@U0123456789>", ""},
		{"<@W0123456789>", ""},
		{"<!here>", ""},
		{"<@&234567890123456789>", ""},
		{"<@123456789012345678>", ""},
		{"@oncall", "is a name, and a mention needs an id"},
		{"sre", "is a name, and a mention needs an id"},
		{"<!subteam^sre>", "a Slack user group is named by its id"},
		{"<@&oncall>", "a Discord role is named by its id"},
		{"@everyone", "would wake everyone"},
		{"<!channel>", "would wake everyone"},
		{"@here", "would wake everyone"},
		{"<@alice>", "is not a mention opsbot can send"},
		{"", "is empty"},
	}
	for _, tt := range tests {
		s := Schedule{Name: "s", Cron: "@daily", Checks: []string{"disk"}, PostTo: both, Notify: []string{"<!here>", tt.mention}}
		err := Config{Checks: []Check{{Name: "disk", Targets: "all", Command: "df"}}, Schedules: []Schedule{s}}.Validate()
		if tt.says == "" {
			if err != nil {
				t.Errorf("%q refused: %v", tt.mention, err)
			}
			continue
		}
		var fe FieldError
		if !errors.As(err, &fe) || fe.Field() != "schedules[0].notify[1]" || !strings.Contains(fe.Msg, tt.says) {
			t.Errorf("%q: Validate = %v; want a problem at schedules[0].notify[1] saying %q", tt.mention, err, tt.says)
		}
		if strings.Contains(err.Error(), "yaml") || strings.Contains(err.Error(), "regexp") {
			t.Errorf("%q: the problem speaks of the machinery: %v", tt.mention, err)
		}
	}
}

func TestValidateNotifyNeedsItsPlatformAndAWay(t *testing.T) {
	t.Parallel()
	s := Schedule{Name: "s", Cron: "@daily", Checks: []string{"disk"}, PostTo: []Destination{{"slack", "C1"}},
		Notify: []string{"<@&234567890123456789>"}, NotifyAs: "dm"}
	err := Config{Checks: []Check{{Name: "disk", Targets: "all", Command: "df"}}, Schedules: []Schedule{s}}.Validate()
	for _, want := range []string{`schedules[0].notify[0]: "<@&234567890123456789>" is a discord mention, but no post_to of this schedule is on discord`,
		`schedules[0].notify_as: "dm": use thread`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want %q", err, want)
		}
	}
}

// announced are the posts of a run that notify: the thread replies shown
// in the channel and the new channel messages after the first post.
func announced(posts []fakePost) []fakePost {
	var out []fakePost
	for i, p := range posts {
		if p.Msg.Broadcast || (i > 0 && p.Thread == "") {
			out = append(out, p)
		}
	}
	return out
}

// A new failure and a recovery each make a new message that notifies (a
// thread reply shown in the channel, with the Slack mentions of notify
// first), say in a line which check on which host, and leave the day's
// summary edited in place; a run that is still failing notifies no one.
// Through the real store, the day's message found again each run.
func TestPublishAnnouncesANewFailureAndARecovery(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostChanges, Destination{"slack", "C0OPS"})
	e.pub.Posters = func(string) (Poster, bool) { return e.poster, true }
	e.sched.Notify = []string{"<!subteam^S0SRE>", "<@&234567890123456789>", "<@U04ALICE>"}
	day1 := e.now
	posts, _, err := e.runAt(day1, nil)
	if err != nil || len(announced(posts)) != 0 {
		t.Fatalf("an all-ok first run: %v, announced %+v; want nothing announced", err, announced(posts))
	}
	root := posts[0].ID
	steps := []struct {
		outputs map[string]string
		says    string // "" for no announcement
	}{
		{map[string]string{"web-02": "95"}, "✗ **Health · morning**: 1 new failure — disk on web-02: 95 is above 90"},
		{nil, ""}, // still failing
		{map[string]string{"web-02": "41"}, "✓ **Health · morning**: 1 recovered — disk on web-02"},
		{nil, ""},
	}
	for i, s := range steps {
		posts, edits, err := e.runAt(day1.Add(time.Duration(i+1)*time.Hour), s.outputs)
		if err != nil {
			t.Fatal(err)
		}
		got := announced(posts)
		if s.says == "" {
			if len(got)+len(edits) != 0 {
				t.Errorf("step %d: announced %+v, edited %d; want a run without change to stay quiet", i, got, len(edits))
			}
			continue
		}
		if len(edits) != 1 || edits[0].ID != root {
			t.Errorf("step %d: edits %+v; want the day's summary %s edited in place", i, edits, root)
		}
		if len(got) != 1 || got[0].Thread != root || got[0].Msg.Text != s.says {
			t.Fatalf("step %d: announced %+v; want one reply in thread %s saying %q", i, got, root, s.says)
		}
		if want := []string{"<!subteam^S0SRE>", "<@U04ALICE>"}; !slices.Equal(got[0].Msg.Notify, want) {
			t.Errorf("step %d: notify %q; want the Slack mentions alone, %q", i, got[0].Msg.Notify, want)
		}
		if p := posts[len(posts)-1]; p.ID != got[0].ID {
			t.Errorf("step %d: the announcement came before %q; want it last, after the details", i, p.Msg.Text)
		}
	}
}

// notify_as: channel announces in a new message at the top of the
// channel; a schedule that posts on failures only still announces the
// recovery.
func TestPublishAnnouncesInTheChannel(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostFailures)
	e.sched.NotifyAs = NotifyChannel
	if posts, _, _ := e.runAt(e.now, map[string]string{"web-01": "99"}); len(announced(posts)) != 1 {
		t.Fatalf("a first run that fails: posts %+v; want one announcement", posts)
	}
	posts, edits, err := e.runAt(e.now.Add(time.Hour), map[string]string{"web-01": "40"})
	got := announced(posts)
	if err != nil || len(edits) != 1 || len(got) != 1 || got[0].Thread != "" || got[0].Msg.Broadcast || !strings.Contains(got[0].Msg.Text, "disk on web-01") {
		t.Errorf("recovery: %v, edits %d, announced %+v; want the summary edited and a new channel message naming disk on web-01", err, len(edits), got)
	}
}

// The grid's long legend shows in the day's first report only; later
// reports of the day name the columns alone. The day's message is named
// for a thread as "health: SCHEDULE · DAY".
func TestPublishShowsTheLegendOnceADay(t *testing.T) {
	t.Parallel()
	e := newPostEnv(t, PostAlways)
	const cells = "`.` ok, `W` warning"
	posts, _, _ := e.runAt(e.now, nil)
	if got := texts(posts); strings.Count(got, cells) != 1 || posts[0].Msg.ThreadName != "health: morning · 2026-11-23" {
		t.Errorf("the day's first report: legend shown %d times, thread named %q; want once, and health: morning · 2026-11-23",
			strings.Count(got, cells), posts[0].Msg.ThreadName)
	}
	posts, _, _ = e.runAt(e.now.Add(time.Hour), nil)
	if got := texts(posts); strings.Contains(got, cells) || !strings.Contains(got, "**Grid** — one character per check: disk") {
		t.Errorf("a later report of the day:\n%s\nwant the columns named without the legend", got)
	}
	posts, _, _ = e.runAt(e.now.AddDate(0, 0, 1), nil)
	if got := texts(posts); !strings.Contains(got, cells) {
		t.Errorf("the next day's first report lacks the legend:\n%s", got)
	}
}

func texts(posts []fakePost) string {
	var b strings.Builder
	for _, p := range posts {
		b.WriteString(p.Msg.Text + "\n")
	}
	return b.String()
}
