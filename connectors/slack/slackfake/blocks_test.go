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
		"unknown block type":        `[{"type":"sectionn","text":{"type":"mrkdwn","text":"hi"}}]`,
		"unknown element type":      `[{"type":"actions","elements":[{"type":"buttonn","text":{"type":"plain_text","text":"x"}}]}]`,
		"button text over 75":       `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"` + long(76) + `"}}]}]`,
		"button text mrkdwn":        `[{"type":"actions","elements":[{"type":"button","text":{"type":"mrkdwn","text":"x"}}]}]`,
		"button without text":       `[{"type":"actions","elements":[{"type":"button","action_id":"a"}]}]`,
		"action_id over 255":        `[{"type":"actions","elements":[` + button(`,"action_id":"`+long(256)+`"`) + `]}]`,
		"value over 2000":           `[{"type":"actions","elements":[` + button(`,"value":"`+long(2001)+`"`) + `]}]`,
		"url over 3000":             `[{"type":"actions","elements":[` + button(`,"url":"`+long(3001)+`"`) + `]}]`,
		"unknown button style":      `[{"type":"actions","elements":[` + button(`,"style":"green"`) + `]}]`,
		"duplicate action_id":       `[{"type":"actions","elements":[` + button(`,"action_id":"a"`) + `,` + button(`,"action_id":"a"`) + `]}]`,
		"duplicate block_id":        `[{"type":"divider","block_id":"a"},{"type":"divider","block_id":"a"}]`,
		"block_id over 255":         `[{"type":"divider","block_id":"` + long(256) + `"}]`,
		"actions over 25":           `[{"type":"actions","elements":[` + many(26, button("")) + `]}]`,
		"actions empty":             `[{"type":"actions","elements":[]}]`,
		"context over 10":           `[{"type":"context","elements":[` + many(11, `{"type":"mrkdwn","text":"x"}`) + `]}]`,
		"context with a button":     `[{"type":"context","elements":[` + button("") + `]}]`,
		"header over 150":           `[{"type":"header","text":{"type":"plain_text","text":"` + long(151) + `"}}]`,
		"header mrkdwn":             `[{"type":"header","text":{"type":"mrkdwn","text":"x"}}]`,
		"header without text":       `[{"type":"header"}]`,
		"section without text":      `[{"type":"section"}]`,
		"section empty text":        `[{"type":"section","text":{"type":"mrkdwn","text":""}}]`,
		"section field over 2000":   `[{"type":"section","fields":[{"type":"mrkdwn","text":"` + long(2001) + `"}]}]`,
		"section bad accessory":     `[{"type":"section","text":{"type":"mrkdwn","text":"x"},"accessory":{"type":"button"}}]`,
		"text object of no type":    `[{"type":"section","text":{"text":"x"}}]`,
		"markdown without text":     `[{"type":"markdown"}]`,
		"context image without alt": `[{"type":"context","elements":[{"type":"image","image_url":"https://x/i.png"}]}]`,
	}
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
