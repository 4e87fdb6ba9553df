package render

import (
	"strings"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/connectors"
)

// Redacting is a connector behind a redactor (the bot's): a Renderer
// redacts what it shows of an answer as a whole through it, not delta by
// delta, so that a secret split across deltas is caught.
type Redacting interface {
	Redactor() *redact.Redactor
}

// redactorOf is the redactor a connector sits behind, or nil.
func redactorOf(c connectors.Connector) *redact.Redactor {
	if rc, ok := c.(Redacting); ok {
		return rc.Redactor()
	}
	return nil
}

// shownSoFar is what of a growing answer may be shown now: all of it but
// its last, unfinished word, which may be the first half of a secret whose
// second half is still to come. Not held back: a word shorter than the
// shortest secret (it could hide only a prefix of one), a word longer than
// a redacted line (the redactor cuts it there too), and a word before
// settled, where the model's text stopped for a tool call.
func shownSoFar(text string, settled int) string {
	if settled >= len(text) {
		return text
	}
	i := strings.LastIndexAny(text, " \t\n") + 1
	if n := len(text) - i; n < redact.MinSecretLen || n > redact.MaxLine {
		return text
	}
	return text[:i]
}
