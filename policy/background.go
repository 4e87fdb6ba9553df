package policy

// A command the policy allows runs without a person looking at it, and
// it is bounded in time: the runner ends it, and the sandbox ends its
// processes, when it returns. A child left running in the background
// (&, coproc, setsid, nohup, disown) would outlive it, so it needs
// approval whatever it runs.

// backgroundWhy is the reason given for a construct that leaves a child
// running: what it does, and why that needs approval.
func backgroundWhy(what, does string) string {
	return what + " " + does + ": a child left running would outlive the command, so it needs approval"
}
