// Package console is the terminal front of `opsbot ask` and `opsbot chat`:
// the answer streams to stdout, tool activity goes to stderr, and approvals
// are asked y/N on the terminal.
package console
