// Package approvals decides whether a command may run: a policy classifies
// every simple command of its shell syntax tree, and a Gate collects votes on
// commands that need a human to approve them.
package approvals
