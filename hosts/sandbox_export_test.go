package hosts

// SetSandboxProbe makes l ask probe, not the kernel, whether the sandbox
// can run: a kernel without Landlock, simulated.
func SetSandboxProbe(l *Local, probe func() error) { l.probe = probe }

// SetSandboxIsolation makes l ask probe, not the kernel, whether the
// sandbox can have its mount namespace: a host where it cannot, simulated.
func SetSandboxIsolation(l *Local, probe func() error) { l.isolationProbe = probe }

// SetSandboxUserNS makes l put the sandbox in a user namespace as a bot
// that is not root does, even as root.
func SetSandboxUserNS(l *Local) { l.forceUserNS = true }

// HiddenPaths is hiddenPaths.
var HiddenPaths = hiddenPaths
