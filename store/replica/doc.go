// Package replica keeps an ha opsbot's database off its machine with
// Litestream (https://litestream.io), run beside it as a sidecar.
//
// Each replica of opsbot has its own database file. The leader's sidecar
// replicates it to a replica named by the leadership generation (the
// Lease's leaseTransitions): <replica>/generation-000007. A standby
// follows the current leader's replica into a warm copy (`litestream
// restore -f`). On promotion it lets the copy catch up with the replica's
// last transaction, checks its integrity, puts it in place, and has its
// sidecar replicate it to the new generation's path, which a deposed
// leader never writes: it cannot overwrite its successor's history.
//
// Before a command runs, the leader asks its sidecar, over the sidecar's
// control socket, to sync and wait: what the bot recorded (an approval
// used, a command started) is off the machine before the command
// happens, so a successor never runs it again.
//
// opsbot does not link Litestream's library (it needs another SQLite
// driver): it talks to the sidecar's socket, and runs the litestream
// binary for restores.
package replica
