// Package mcp brings the tools of Model Context Protocol servers to the
// agent, behind opsbot's own decisions: the config (mcp.servers) says per
// tool whether a call runs at once, waits for people (the command
// approvals' Gate, bound to the server, the tool and its exact arguments)
// or is refused; a server's hints are shown, never obeyed. Servers are
// reached over stdio (a child process with only the environment the config
// gives it, in its own process group) or streamable HTTP, each call under a
// deadline, its result cut to a size and redacted before anyone reads it,
// and audited like a command. A server that is down never blocks a turn.
package mcp
