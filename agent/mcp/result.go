package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsbot/opsbot/agent/internal/textcut"
)

// render is a call's result as text for the model: its text content,
// what else it holds named, and the structured content when there is no
// text.
func render(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[an image (%s, %s) not shown]", c.MIMEType, textcut.Bytes(int64(len(c.Data))))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio (%s, %s) not shown]", c.MIMEType, textcut.Bytes(int64(len(c.Data))))
		case *sdk.EmbeddedResource:
			b.WriteString(resourceText(c.Resource))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[a link to %s]", c.URI)
		default:
			raw, _ := json.Marshal(c)
			b.Write(raw)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	return b.String()
}

func resourceText(r *sdk.ResourceContents) string {
	if r == nil {
		return ""
	}
	if r.Text != "" {
		return r.Text
	}
	return fmt.Sprintf("[%s (%s, %s) not shown]", r.URI, r.MIMEType, textcut.Bytes(int64(len(r.Blob))))
}

// cut keeps the first max bytes of text and says what it left out and
// which setting keeps more.
func cut(text string, max int, server string) (string, bool) {
	if len(text) <= max {
		return text, false
	}
	kept := textcut.Head(text, max)
	return kept + fmt.Sprintf("\n[cut: the result was %s; only its first %s are shown (mcp.servers.%s.max_output)]",
		textcut.Bytes(int64(len(text))), textcut.Bytes(int64(len(kept))), server), true
}
