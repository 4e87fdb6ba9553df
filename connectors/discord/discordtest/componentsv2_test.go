package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const botToken = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhT3xq.k9Vz2pLqR8mW4nXc7YbJd1sFg0Ua5TiOeZrQwE"

// call sends body to the fake's route as the bot and returns the status
// and Discord's error code (0 on success).
func call(t *testing.T, f *Fake, method, path, body string) (int, int) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.URL+"api/v9/"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bot "+botToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Code int `json:"code"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Code
}

// text is a text display of s.
func text(s string) string { return fmt.Sprintf(`{"type":10,"content":%q}`, s) }

// button is a button with custom_id id.
func button(id string) string {
	return fmt.Sprintf(`{"type":2,"style":1,"label":"Go","custom_id":%q}`, id)
}

// v2 is a V2 message body of components.
func v2(components ...string) string {
	return `{"flags":32768,"components":[` + strings.Join(components, ",") + `]}`
}

// repeat is n components made by one.
func repeat(n int, one func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = one(i)
	}
	return out
}

// rows are n action rows of four buttons: 5n components.
func rows(n int) []string {
	return repeat(n, func(i int) string {
		return `{"type":1,"components":[` + strings.Join(repeat(4, func(j int) string { return button(fmt.Sprint(i, "-", j)) }), ",") + `]}`
	})
}

// The fake refuses, with Discord's 50035 Invalid Form Body, what Discord
// refuses of a Components V2 message, and takes what it takes: each case
// differs from an accepted body by the one rule it breaks.
func TestFakeEnforcesComponentsV2(t *testing.T) {
	t.Parallel()
	f := New(t, botToken)
	f.SetRoutes(map[string]Limit{})
	ch := f.AddChannel("1000000000000000001", "ops")
	section := func(accessory string) string {
		return `{"type":9,"components":[` + text("Host: web-1") + `]` + accessory + `}`
	}
	cases := []struct {
		name, body string
		code       int
	}{
		{"text displays", v2(text("hello"), text("-# ran 1 command")), 0},
		{"a card", v2(`{"type":17,"accent_color":15105570,"components":[` + text("card") + `,{"type":14,"divider":true},` +
			section(`,"accessory":`+button("approve:1")) + `]}`), 0},
		{"content beside the flag", `{"flags":32768,"content":"hello","components":[` + text("hello") + `]}`, 50035},
		{"an embed beside the flag", `{"flags":32768,"embeds":[{"description":"x"}],"components":[` + text("hello") + `]}`, 50035},
		{"no components", v2(), 50035},
		{"4,000 characters of text", v2(text(strings.Repeat("a", 2000)), text(strings.Repeat("b", 2000))), 0},
		{"4,001 characters of text", v2(text(strings.Repeat("a", 2000)), text(strings.Repeat("b", 2001))), 50035},
		{"40 components", v2(repeat(40, func(int) string { return text("x") })...), 0},
		{"41 components", v2(repeat(41, func(int) string { return text("x") })...), 50035},
		{"40 components in rows", v2(rows(8)...), 0},
		{"41 components in rows", v2(append(rows(8), text("x"))...), 50035},
		{"a section without accessory", v2(section("")), 50035},
		{"a section with four texts", v2(`{"type":9,"components":[` + strings.Join(repeat(4, func(int) string { return text("x") }), ",") +
			`],"accessory":` + button("a") + `}`), 50035},
		{"a text display as accessory", v2(section(`,"accessory":` + text("x"))), 50035},
		{"an empty text display", v2(text("")), 50035},
		{"a container of eleven", v2(`{"type":17,"components":[` + strings.Join(repeat(11, func(int) string { return text("x") }), ",") + `]}`), 50035},
		{"a container in a container", v2(`{"type":17,"components":[{"type":17,"components":[` + text("x") + `]}]}`), 50035},
		{"an accent past white", v2(`{"type":17,"accent_color":16777216,"components":[` + text("x") + `]}`), 50035},
		{"a button at the top", v2(button("a")), 50035},
		{"a duplicated custom_id", v2(section(`,"accessory":`+button("a")), section(`,"accessory":`+button("a"))), 50035},
		{"a text display without the flag", `{"components":[` + text("hello") + `]}`, 50035},
	}
	for _, tc := range cases {
		status, code := call(t, f, http.MethodPost, "channels/"+ch+"/messages", tc.body)
		if code != tc.code || (tc.code == 0) != (status == http.StatusOK) {
			t.Errorf("%s: answered %d with code %d; want code %d", tc.name, status, code, tc.code)
		}
	}
}

// An edit of a V2 message says the flag again and sends components: an
// edit with content, or without the flag, is refused; the message then
// shows its new text displays.
func TestFakeEditOfAV2Message(t *testing.T) {
	t.Parallel()
	f := New(t, botToken)
	f.SetRoutes(map[string]Limit{})
	ch := f.AddChannel("1000000000000000001", "ops")
	if status, code := call(t, f, http.MethodPost, "channels/"+ch+"/messages", v2(text("Looking."))); code != 0 {
		t.Fatalf("post answered %d %d", status, code)
	}
	c, _ := f.Channel(ch)
	id := c.Messages[0]
	path := "channels/" + ch + "/messages/" + id
	for name, body := range map[string]string{
		"content without the flag":    `{"content":"Looked."}`,
		"components without the flag": `{"components":[` + text("Looked.") + `]}`,
		"content with the flag":       `{"flags":32768,"content":"Looked.","components":[` + text("Looked.") + `]}`,
	} {
		if _, code := call(t, f, http.MethodPatch, path, body); code != 50035 {
			t.Errorf("an edit with %s: code %d; want 50035", name, code)
		}
	}
	if status, code := call(t, f, http.MethodPatch, path, v2(text("Looked."), text("-# 3s"))); code != 0 {
		t.Fatalf("the V2 edit answered %d %d", status, code)
	}
	m, _ := f.Message(id)
	if m.Content != "Looked.\n-# 3s" || m.Flags&FlagComponentsV2 == 0 {
		t.Errorf("after the edit the message shows %q with flags %d", m.Content, m.Flags)
	}
}
