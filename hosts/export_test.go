package hosts

// Hooks for the external tests of this package.

// ShellQuote exposes shellQuote.
var ShellQuote = shellQuote

// RemoteCommand exposes remoteCommand.
var RemoteCommand = remoteCommand

// NewCapture exposes the output capture: write to w, then read the kept
// output, the truncated flag and the bytes held in memory.
func NewCapture(limit int) (w interface{ Write([]byte) (int, error) }, result func() ([]byte, bool, int)) {
	c := newCapture(limit)
	return c, func() ([]byte, bool, int) { return c.bytes(), c.truncated(), c.retained() }
}
