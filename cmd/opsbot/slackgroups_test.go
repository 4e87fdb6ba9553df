package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSlackGroups is Slack's Web API as usergroups.list answers it: form
// encoded requests with the bearer token, JSON answers, ok:false with an
// error code, and 429s with Retry-After first when asked.
type fakeSlackGroups struct {
	mu       sync.Mutex
	token    string
	answer   string // the JSON body of a 200
	limited  int    // how many calls answer 429 first
	requests []string
}

func (f *fakeSlackGroups) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.requests = append(f.requests, r.URL.Path+"?"+r.PostForm.Encode())
	if f.limited > 0 {
		f.limited--
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch {
	case r.Header.Get("Authorization") != "Bearer "+f.token:
		fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
	case r.URL.Path != "/api/usergroups.list":
		fmt.Fprint(w, `{"ok":false,"error":"unknown_method"}`)
	default:
		fmt.Fprint(w, f.answer)
	}
}

const twoGroups = `{"ok":true,"usergroups":[{"id":"S0614TZR7","team_id":"T1","handle":"sre","name":"Site reliability","user_count":4},
	{"id":"S06158AV7","handle":"dba","name":"Databases","user_count":2}]}`

// The table of groups, after waiting out two 429s as Slack asked (the
// waits are recorded, not slept).
func TestSlackGroupsWaitsOutRateLimits(t *testing.T) {
	t.Parallel()
	fake := &fakeSlackGroups{token: "xoxb-1-good", answer: twoGroups, limited: 2}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var waits []time.Duration
	api := &slackAPI{base: srv.URL + "/api/", token: "xoxb-1-good", client: srv.Client(),
		sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	var out, errw strings.Builder
	if err := listSlackGroups(context.Background(), &out, &errw, api); err != nil {
		t.Fatal(err)
	}
	want := "ID         HANDLE  NAME              MEMBERS\nS0614TZR7  @sre    Site reliability  4\nS06158AV7  @dba    Databases         2\n"
	if out.String() != want {
		t.Errorf("table:\n%s\nwant\n%s", out.String(), want)
	}
	if len(waits) != 2 || waits[0] != 3*time.Second || len(fake.requests) != 3 || fake.requests[2] != "/api/usergroups.list?include_count=true" {
		t.Errorf("waits %v, requests %v; want two 3s waits, then the call again", waits, fake.requests)
	}
	if !strings.Contains(errw.String(), "user_groups: [S0614TZR7]") {
		t.Errorf("no hint at the config's words: %q", errw.String())
	}
}

// Slack's refusals, through the binary: a missing scope names the scope
// and where to add it, a bad token says which token to copy (both exit
// 2), a missing token says where to set it; the token comes from
// SLACK_BOT_TOKEN when the config has none.
func TestSlackGroupsErrors(t *testing.T) {
	t.Parallel()
	fake := &fakeSlackGroups{token: "xoxb-1-good"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "opsbot.yaml")
	os.WriteFile(cfg, []byte("slack:\n  api_url: "+srv.URL+"/api/\n"), 0o600)
	for _, tc := range []struct {
		name, answer, token string
		code                int
		want                string
	}{
		{"missing scope", `{"ok":false,"error":"missing_scope","needed":"usergroups:read","provided":"chat:write"}`, "xoxb-1-good", 2,
			"the bot token lacks the scope usergroups:read that usergroups.list needs: add it to the app's Bot Token Scopes (OAuth & Permissions), reinstall the app"},
		{"bad token", twoGroups, "xoxb-2-bad", 2, "Slack refused the bot token (invalid_auth): copy the Bot User OAuth Token"},
		{"another error", `{"ok":false,"error":"fatal_error"}`, "xoxb-1-good", 1, "Slack answered usergroups.list with fatal_error"},
		{"no token", twoGroups, "", 2, "no Slack bot token: set slack.bot_token in the config (--config FILE) or SLACK_BOT_TOKEN"},
	} {
		fake.mu.Lock()
		fake.answer = tc.answer
		fake.mu.Unlock()
		cmd := opsbot(t, t.TempDir(), "slack", "groups", "--config", cfg)
		cmd.Env = append(cmd.Env, "SLACK_BOT_TOKEN="+tc.token)
		b, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: exit %d %q; want %d and %q", tc.name, cmd.ProcessState.ExitCode(), b, tc.code, tc.want)
		}
		if strings.Contains(string(b), tc.token) && tc.token != "" {
			t.Errorf("%s: the token in the output", tc.name)
		}
	}
}
