package slackfake

import (
	"net/url"
	"strings"
	"testing"
)

// button is a button element's JSON with the given fields.
func button(fields string) string {
	return `{"type":"button","text":{"type":"plain_text","text":"Approve"}` + fields + `}`
}

// The fake refuses with invalid_blocks what Slack refuses (Block Kit
// reference), and takes the same blocks within the limits.
func TestContentRefusesWhatSlackRefuses(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("x", n) }
	many := func(n int, el string) string { return strings.TrimSuffix(strings.Repeat(el+",", n), ",") }
	ok := []string{
		`[{"type":"section","text":{"type":"mrkdwn","text":"hi"},"accessory":` + button(`,"action_id":"a","value":"`+long(2000)+`"`) + `}]`,
		`[{"type":"header","text":{"type":"plain_text","text":"` + long(150) + `"}}]`,
		`[{"type":"actions","elements":[` + button(`,"action_id":"a"`) + `,` + button(`,"action_id":"b","url":"https://x/`+long(2990)+`"`) + `]}]`,
		`[{"type":"context","elements":[` + many(10, `{"type":"mrkdwn","text":"x"}`) + `]}]`,
		`[{"type":"divider","block_id":"a"},{"type":"divider","block_id":"b"},{"type":"markdown","text":"**hi**"}]`,
	}
	bad := map[string]string{
		"unknown block type":           `[{"type":"sectionn","text":{"type":"mrkdwn","text":"hi"}}]`,
		"unknown element type":         `[{"type":"actions","elements":[{"type":"buttonn","text":{"type":"plain_text","text":"x"}}]}]`,
		"button text over 75":          `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"` + long(76) + `"}}]}]`,
		"button text mrkdwn":           `[{"type":"actions","elements":[{"type":"button","text":{"type":"mrkdwn","text":"x"}}]}]`,
		"button without text":          `[{"type":"actions","elements":[{"type":"button","action_id":"a"}]}]`,
		"action_id over 255":           `[{"type":"actions","elements":[` + button(`,"action_id":"`+long(256)+`"`) + `]}]`,
		"value over 2000":              `[{"type":"actions","elements":[` + button(`,"value":"`+long(2001)+`"`) + `]}]`,
		"url over 3000":                `[{"type":"actions","elements":[` + button(`,"url":"`+long(3001)+`"`) + `]}]`,
		"unknown button style":         `[{"type":"actions","elements":[` + button(`,"style":"green"`) + `]}]`,
		"duplicate action_id":          `[{"type":"actions","elements":[` + button(`,"action_id":"a"`) + `,` + button(`,"action_id":"a"`) + `]}]`,
		"duplicate block_id":           `[{"type":"divider","block_id":"a"},{"type":"divider","block_id":"a"}]`,
		"block_id over 255":            `[{"type":"divider","block_id":"` + long(256) + `"}]`,
		"actions over 25":              `[{"type":"actions","elements":[` + many(26, button("")) + `]}]`,
		"actions empty":                `[{"type":"actions","elements":[]}]`,
		"context over 10":              `[{"type":"context","elements":[` + many(11, `{"type":"mrkdwn","text":"x"}`) + `]}]`,
		"context with a button":        `[{"type":"context","elements":[` + button("") + `]}]`,
		"header over 150":              `[{"type":"header","text":{"type":"plain_text","text":"` + long(151) + `"}}]`,
		"header mrkdwn":                `[{"type":"header","text":{"type":"mrkdwn","text":"x"}}]`,
		"header without text":          `[{"type":"header"}]`,
		"section without text":         `[{"type":"section"}]`,
		"section empty text":           `[{"type":"section","text":{"type":"mrkdwn","text":""}}]`,
		"section field over 2000":      `[{"type":"section","fields":[{"type":"mrkdwn","text":"` + long(2001) + `"}]}]`,
		"section bad accessory":        `[{"type":"section","text":{"type":"mrkdwn","text":"x"},"accessory":{"type":"button"}}]`,
		"text object of no type":       `[{"type":"section","text":{"text":"x"}}]`,
		"markdown without text":        `[{"type":"markdown"}]`,
		"context image without alt":    `[{"type":"context","elements":[{"type":"image","image_url":"https://x/i.png"}]}]`,
		"task card status completed":   `[{"type":"task_card","task_id":"t1","title":"uptime","status":"completed"}]`,
		"task card without title":      `[{"type":"task_card","task_id":"t1"}]`,
		"task card without task_id":    `[{"type":"task_card","title":"uptime"}]`,
		"task card of an odd field":    `[{"type":"task_card","task_id":"t1","title":"uptime","state":"done"}]`,
		"task card output as a string": `[{"type":"task_card","task_id":"t1","title":"uptime","output":"exit 0"}]`,
		"task card twice":              `[{"type":"task_card","task_id":"t1","title":"a"},{"type":"task_card","task_id":"t1","title":"b"}]`,
		"task card beside a plan":      `[{"type":"plan","title":"p","tasks":[{"type":"task_card","task_id":"t1","title":"a"}]},{"type":"task_card","task_id":"t2","title":"b"}]`,
	}
	ok = append(ok, `[{"type":"task_card","task_id":"t1","title":"uptime","status":"complete","output":{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"exit 0"}]}]}},{"type":"section","text":{"type":"mrkdwn","text":"ok"}}]`)
	for i, blocks := range ok {
		if _, code := content(url.Values{"text": {"t"}, "blocks": {blocks}}, true); code != "" {
			t.Errorf("ok %d refused with %s: %.200s", i, code, blocks)
		}
	}
	for name, blocks := range bad {
		if _, code := content(url.Values{"text": {"t"}, "blocks": {blocks}}, true); code != "invalid_blocks" {
			t.Errorf("%s: %q; want invalid_blocks", name, code)
		}
	}
}

// A message's task_card blocks are its cards: posted with it, replaced by
// an update's (an update without any leaves none), and a stream's start
// applies its chunks as an append does.
func TestMessageCardsFollowPostsAndUpdates(t *testing.T) {
	t.Parallel()
	s := New()
	t.Cleanup(s.Close)
	root := s.Mention("C0OPS", "U0ALICE", "", "hi")
	card := func(status string) string {
		return `[{"type":"task_card","task_id":"t1","title":"uptime","status":"` + status + `"},{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]`
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	posted := s.postMessage(url.Values{"channel": {"C0OPS"}, "thread_ts": {root.TS}, "text": {"hi"}, "blocks": {card("in_progress")}})
	ts, _ := posted["ts"].(string)
	m := s.find("C0OPS", ts)
	if m == nil || len(m.Tasks) != 1 || m.Tasks[0].Status != "in_progress" {
		t.Fatalf("posted with a card: %v, cards %+v; want t1 in_progress", posted, m)
	}
	s.update(url.Values{"channel": {"C0OPS"}, "ts": {ts}, "text": {"hi"}, "blocks": {card("complete")}})
	if len(m.Tasks) != 1 || m.Tasks[0].Status != "complete" || m.Tasks[0].Updates != 2 {
		t.Errorf("updated with the card complete: %+v; want t1 complete, changed twice", m.Tasks)
	}
	s.update(url.Values{"channel": {"C0OPS"}, "ts": {ts}, "text": {"bye"}})
	if len(m.Tasks) != 0 {
		t.Errorf("updated without cards: %+v; want none (an update replaces what the message shows)", m.Tasks)
	}
	started := s.startStream(url.Values{"channel": {"C0OPS"}, "thread_ts": {root.TS}, "recipient_user_id": {"U0ALICE"}, "recipient_team_id": {Team},
		"chunks": {`[{"type":"task_update","id":"t2","title":"df -h","status":"in_progress"}]`}})
	sts, _ := started["ts"].(string)
	if sm := s.find("C0OPS", sts); sm == nil || len(sm.Tasks) != 1 || sm.Tasks[0].ID != "t2" {
		t.Errorf("a stream started with a card chunk: %v; want its card t2", started)
	}
	if bad := s.startStream(url.Values{"channel": {"C0OPS"}, "thread_ts": {root.TS}, "recipient_user_id": {"U0ALICE"}, "recipient_team_id": {Team},
		"chunks": {`[{"type":"task_update","id":"t3","title":"df -h","status":"completed"}]`}}); bad["error"] != "invalid_chunks" {
		t.Errorf("a start with a card of status completed: %v; want invalid_chunks", bad)
	}
}
