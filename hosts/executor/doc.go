// Package executor runs the commands the Guard let through: Fleet is the
// hosts.Executor of a real deployment (redacted output, head and tail
// kept, the sandbox for what no person approved); Audited and
// AuditedRunner write every command to the audit trail; ProcessLedger
// records each command while it runs, so that after a crash the next
// start ends what was left running, and the approval a run claimed is
// marked used as its command starts (Settled marks it when the command
// never started).
//
// It knows hosts and the redactor only: the store and the policy are
// reached through the small interfaces it declares (Auditor, LedgerStore,
// FollowUpFinisher, Decider), which cmd/opsbot wires.
package executor
