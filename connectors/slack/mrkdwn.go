package slack

import (
	"regexp"
	"strings"

	"github.com/opsbot/opsbot/connectors"
)

// Slack's mrkdwn is not CommonMark: *bold*, _italic_, <url|label>, no
// headings, and &, < and > escaped. toMrkdwn converts what the bot writes
// (CommonMark) line by line; code (fenced or inline) is left as it is,
// only escaped.

var (
	reLink   = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^)\s]+)\)`)
	reBold   = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	reItalic = regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*\n]*?)\*([^*\w]|$)`)
	reHead   = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	reBullet = regexp.MustCompile(`^(\s*)[-*+]\s+`)
)

// escape makes text safe for mrkdwn: Slack reads <…> as links and
// mentions, and &-entities.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// unescape is escape's inverse (for the fake, and for text people wrote).
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// mention renders a person as Slack shows them.
func mention(id string) string { return "<@" + id + ">" }

// groupMention is a Slack user group's mention.
func groupMention(id string) string { return "<!subteam^" + id + ">" }

// toMrkdwn converts CommonMark text with mention placeholders to mrkdwn.
func toMrkdwn(text string) string {
	lines := strings.Split(text, "\n")
	inFence := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			if !inFence {
				// Slack shows a fence's language tag as text.
				l = strings.TrimRight(l[:strings.Index(l, "```")+3], " ")
			}
			inFence = !inFence
			lines[i] = l
			continue
		}
		if inFence {
			lines[i] = escape(l)
			continue
		}
		lines[i] = inlineMrkdwn(l)
	}
	return connectors.RenderAllMentions(strings.Join(lines, "\n"), mention, groupMention)
}

// inlineMrkdwn converts one line outside code fences; `code` spans stay.
func inlineMrkdwn(l string) string {
	if m := reHead.FindStringSubmatch(l); m != nil {
		l = "**" + m[1] + "**"
	}
	l = reBullet.ReplaceAllString(l, "$1• ")
	parts := strings.Split(l, "`")
	for i := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			parts[i] = escape(parts[i]) // inside `code`
			continue
		}
		p := escape(parts[i])
		p = reLink.ReplaceAllString(p, "<$2|$1>")
		p = reItalic.ReplaceAllString(p, "${1}_${2}_${3}")
		p = reBold.ReplaceAllStringFunc(p, func(s string) string { return "*" + s[2:len(s)-2] + "*" })
		parts[i] = p
	}
	return strings.Join(parts, "`")
}
