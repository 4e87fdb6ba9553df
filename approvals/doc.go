// Package approvals decides whether a command may run: the policy
// (package policy) classifies it, and a Gate collects votes on commands
// that need a human to approve them. The Guard puts both in front of a
// hosts.Executor: the agent's tools, the chat's `run`, and `opsbot hosts
// exec` ask it before anything runs. Cards show a pending request to the
// people who may decide it.
package approvals
