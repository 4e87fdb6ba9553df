package tools

import "github.com/opsbot/opsbot/agent"

// textOf joins the text blocks of a message.
func textOf(m agent.Message) string {
	s := ""
	for _, b := range m.Content {
		if b.Type == agent.BlockText {
			s += b.Text
		}
	}
	return s
}
