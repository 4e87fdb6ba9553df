// Package store keeps everything that must survive a restart in SQLite:
// sessions, messages, turns, approvals and votes, jobs, notifications,
// check results, seen event ids, posted messages and the audit trail.
//
// Every public method is one transaction; writes begin IMMEDIATE so that
// concurrent writers queue on busy_timeout instead of failing with
// SQLITE_BUSY on lock upgrade.
package store
