// Package hosts runs commands on the fleet: an inventory of hosts and
// groups, a pooled SSH client per host, a local runner for the bot's own
// machine, streamed output with deadlines and caps, and fan-out.
package hosts
