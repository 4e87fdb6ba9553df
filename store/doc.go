// Package store keeps everything that must survive a restart in SQLite:
// sessions, messages, turns, approvals and votes, jobs, notifications,
// check results, seen event ids, posted messages and the audit trail.
//
// Store is the database; its methods are the database's own (Close, Ping,
// Health…) and one accessor per aggregate, each a sub-store over the same
// connections: Approvals, Jobs, Inbox, Sessions, Checks, Web and Audit.
// The rows of a domain are that domain's types (hosts.Job,
// approvals.Approval, checks.CheckRun…); a sub-store implements the
// interface its domain declares for it (hosts.JobStore, approvals.Store,
// checks.RunStore…).
//
// Every public method is one transaction; writes begin IMMEDIATE so that
// concurrent writers queue on busy_timeout instead of failing with
// SQLITE_BUSY on lock upgrade.
package store
