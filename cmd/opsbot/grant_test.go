package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/store"
)

// Issue 31 item 6's acceptance, through the web chat with a scripted
// model: a 10-command diagnosis with 6 approve-class commands of one kind
// (mkdir of a unit's directory, under one directory, on one host) needs
// one click of bob's "Approve similar"; alice's own click on it, first,
// grants nothing. In the same run, commands not similar to the grant each
// get their own card (bob denies them) and deny-class ones, similar or
// not, are refused without one: none of them runs. Each use of the grant
// is audited with its id.
func TestGrantCoversSimilarCommandsOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	units := filepath.Join(dir, "units")
	os.Mkdir(units, 0o755)
	mk := func(name string) string { return "mkdir " + filepath.Join(units, name) }
	diagnosis := []string{"df -h", mk("svc-1"), "uptime", mk("svc-2"), mk("svc-3"), "free -m", mk("svc-4"), mk("svc-5"), "cat /etc/hostname", mk("svc-6")}
	notSimilar := []string{"mkdir -p " + filepath.Join(units, "svc-7"), mk("other/svc-8"), mk("svc-10") + " && " + mk("svc-11"),
		mk("svc-12") + " > " + filepath.Join(units, "out"), "env " + mk("svc-13"), mk("svc-$(id -u)"), "/tmp/mkdir " + filepath.Join(units, "svc-14")}
	denied := []string{mk("svc-9"), "rm -rf /"}
	script := slices.Concat(diagnosis, notSimilar, denied)

	llm := &fakeLLM{t: t, respond: func(req fakeLLMRequest) (string, string) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				n++
			}
		}
		if n < len(script) {
			return script[n], ""
		}
		return "", "Diagnosis done."
	}}
	base, _ := startBrowserBotIn(t, dir, llm, "approvals:\n  approvers:\n    - web:\n        users: [alice, bob]\n"+
		"policy:\n  rules:\n    - program: mkdir\n      args: [\"*/svc-9\"]\n      action: deny\n      reason: svc-9 is protected\n")
	c := &chatClient{t: t, base: base}
	c.listen()
	thread := fmt.Sprint(c.post("/api/messages", map[string]any{"channel": "ops", "user": "alice", "text": "@opsbot diagnose the units"})["thread"])

	d := grantDriver{c: c, thread: thread, decided: map[string]bool{}}
	d.drive(t, mk("svc-1"))
	if d.approveClicks != 1 {
		t.Errorf("bob clicked approve %d times for the diagnosis, want 1 (≤ 2)", d.approveClicks)
	}
	for _, cmd := range diagnosis[1:] {
		if strings.HasPrefix(cmd, "mkdir") && slices.Contains(d.cards, cmd) && cmd != mk("svc-1") {
			t.Errorf("%q asked for a card: the grant did not cover it", cmd)
		}
	}
	for i := 1; i <= 6; i++ {
		if _, err := os.Stat(filepath.Join(units, fmt.Sprintf("svc-%d", i))); err != nil {
			t.Errorf("svc-%d was not made: %v", i, err)
		}
	}
	for _, cmd := range notSimilar {
		if !slices.Contains(d.cards, cmd) && !strings.Contains(cmd, "$(") {
			t.Errorf("%q ran without its own card (cards: %q)", cmd, d.cards)
		}
	}
	for _, cmd := range denied {
		if slices.Contains(d.cards, cmd) {
			t.Errorf("deny-class %q got a card", cmd)
		}
	}
	entries, _ := os.ReadDir(units)
	var made []string
	for _, e := range entries {
		made = append(made, e.Name())
	}
	if want := []string{"svc-1", "svc-2", "svc-3", "svc-4", "svc-5", "svc-6"}; !slices.Equal(made, want) {
		t.Errorf("%s holds %q, want %q: only the diagnosis's commands ran", units, made, want)
	}
	// Each command not covered asked its own card or was refused by the
	// policy: a word computed at run time may be svc-9, which the policy
	// denies.
	results := allToolResults(llm)
	if refused, want := strings.Count(results, "denied by policy"), len(notSimilar)+len(denied)-(len(d.cards)-1); refused != want {
		t.Errorf("%d commands were refused by the policy, want %d (the rest asked a card):\n%s", refused, want, results)
	}

	// `approvals` lists the grant; `approvals revoke 1` ends it.
	c.post("/api/messages", map[string]any{"channel": "ops", "thread": thread, "user": "carol", "text": "approvals"})
	list := d.waitText(t, "Approved similar commands in this thread")
	if !strings.Contains(list, "grant 1: commands like `"+mk("svc-1")+"` on `local` — by @bob · ") || !strings.HasSuffix(list, " minutes left") {
		t.Errorf("approvals lists:\n%s", list)
	}
	c.post("/api/messages", map[string]any{"channel": "ops", "thread": thread, "user": "carol", "text": "approvals revoke 1"})
	d.waitText(t, "Grant 1 revoked")
	auditedUses(t, filepath.Join(dir, "opsbot.db"), 5)
}

// allToolResults is every tool result in the model's last request.
func allToolResults(llm *fakeLLM) string {
	reqs := llm.allRequests()
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			out = append(out, fmt.Sprint(m.Content))
		}
	}
	return strings.Join(out, "\n")
}

// auditedUses checks the store's audit trail holds n uses of grant 1.
func auditedUses(t *testing.T, db string, n int) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trail, err := st.Audit().AuditTrail(context.Background(), "grant:1")
	if err != nil {
		t.Fatal(err)
	}
	uses := 0
	for _, e := range trail {
		if e.Action == "grant.use" {
			uses++
		}
	}
	if uses != n || len(trail) != n+2 {
		t.Errorf("grant 1's audit trail has %d uses in %d entries, want %d uses, its creation and its revoke", uses, len(trail), n)
	}
}

// grantDriver plays alice and bob on the thread's cards until the
// model's last word.
type grantDriver struct {
	c             *chatClient
	thread        string
	decided       map[string]bool
	cards         []string
	approveClicks int
}

// drive decides each card as it comes: the first card (of first) alice
// tries to grant herself, then bob grants; bob denies every other card.
func (d *grantDriver) drive(t *testing.T, first string) {
	t.Helper()
	limit := time.NewTimer(3 * time.Minute) // a hang, not a speed bound
	defer limit.Stop()
	for {
		changed, card, done := d.scan()
		switch {
		case card != nil:
			d.decide(t, card, first)
			continue
		case done:
			return
		}
		select {
		case <-changed:
		case <-limit.C:
			t.Fatalf("no last word; stream:\n%s", d.c.stream())
		}
	}
}

// scan finds an undecided card of the thread, or the model's last word.
func (d *grantDriver) scan() (chan struct{}, map[string]any, bool) {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	done := false
	for id, m := range d.c.msgs {
		if m["thread"] != d.thread || m["bot"] != true {
			continue
		}
		if strings.Contains(fmt.Sprint(m["text"]), "Diagnosis done.") && m["finished"] == true {
			done = true
		}
		if buttons, _ := m["buttons"].([]any); len(buttons) >= 2 && buttonOf(m, "approve") != nil && !d.decided[id] {
			return d.c.changed, m, false
		}
	}
	return d.c.changed, nil, done
}

func buttonOf(m map[string]any, action string) map[string]any {
	buttons, _ := m["buttons"].([]any)
	for _, b := range buttons {
		if bm := b.(map[string]any); bm["action_id"] == action {
			return bm
		}
	}
	return nil
}

// decide clicks on one card.
func (d *grantDriver) decide(t *testing.T, card map[string]any, first string) {
	t.Helper()
	id, text := fmt.Sprint(card["id"]), fmt.Sprint(card["text"])
	d.decided[id] = true
	cmd := cardCommand(text)
	d.cards = append(d.cards, cmd)
	click := func(user, action string) {
		b := buttonOf(card, action)
		if b == nil {
			t.Fatalf("the card of %q has no %s button: %v", cmd, action, card["buttons"])
		}
		d.c.post("/api/actions", map[string]any{"message_id": id, "action_id": action, "value": b["value"], "user": user})
	}
	if cmd != first {
		click("bob", "deny")
		return
	}
	click("alice", "approve_similar")
	d.waitText(t, "you asked for this command; someone else has to approve commands like `")
	click("bob", "approve_similar")
	d.approveClicks++
}

// cardCommand is the command a card's text shows in its code block.
func cardCommand(text string) string {
	_, rest, _ := strings.Cut(text, "```\n")
	cmd, _, _ := strings.Cut(rest, "\n```")
	return cmd
}

// waitText waits for a bot message of the thread containing s.
func (d *grantDriver) waitText(t *testing.T, s string) string {
	t.Helper()
	limit := time.NewTimer(time.Minute) // a hang, not a speed bound
	defer limit.Stop()
	for {
		d.c.mu.Lock()
		changed := d.c.changed
		for _, m := range d.c.msgs {
			if text := fmt.Sprint(m["text"]); m["thread"] == d.thread && strings.Contains(text, s) {
				d.c.mu.Unlock()
				return text
			}
		}
		d.c.mu.Unlock()
		select {
		case <-changed:
		case <-limit.C:
			t.Fatalf("no message with %q; stream:\n%s", s, d.c.stream())
		}
	}
}
