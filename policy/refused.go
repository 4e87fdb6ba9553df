package policy

// AlwaysRefused describes, for people and for the agent's system prompt,
// what the policy denies whatever the config says (destructive.go,
// call.go, classify.go). Keep it in step with them.
var AlwaysRefused = []string{
	"rm -r of / or of a top-level directory",
	"mkfs, mke2fs, mkswap, wipefs and shred",
	"dd writing to a device or a system path",
	"chmod/chown/chgrp -R on a top-level directory",
	"writing (tee or a redirection) to a system path or a start-up file",
	"piping a downloaded program into a shell (curl … | sh)",
	"commands with invisible or control characters, or that are not valid UTF-8",
}
