package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// bwrapProbe is what a probe found on one connection: whether bubblewrap
// runs there with the options every sandboxed command uses, and if not,
// why, in the host's words.
type bwrapProbe struct {
	ok  bool
	why string
}

// probeTimeout bounds the probe command itself (not the connect).
const probeTimeout = 10 * time.Second

// probeOK is what the probe prints from inside the sandbox when it works.
const probeOK = "opsbot-bwrap-ok"

// bwrap probes the connection for bubblewrap, once per connection: a
// sandboxed echo, run exactly as commands will be (remoteCommand with the
// sandbox), so a bwrap that is installed but cannot work there (a kernel
// without user namespaces for a non-root user, a version without an
// option we use) counts as missing. The result is kept until the
// connection is dropped; concurrent first callers share one probe. A
// first unapproved command usually makes it unneeded: it carries the
// probe itself (remote_sandbox_fold.go), and what it finds is kept alike.
func (c *conn) bwrap(ctx context.Context) (bwrapProbe, error) {
	select {
	case c.probing <- struct{}{}:
		defer func() { <-c.probing }()
	case <-ctx.Done():
		return bwrapProbe{}, ctx.Err()
	}
	if pr := c.known(); pr != nil {
		return *pr, nil
	}
	sess, cl, err := c.session(ctx)
	if err != nil {
		return bwrapProbe{}, err
	}
	defer c.done()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	line := remoteCommand("echo "+probeOK, Options{Timeout: probeTimeout, Sandbox: &Sandbox{}}, newToken(), true)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout+killAfter)
	defer cancel()
	err = runBounded(ctx, sess, line)
	if ctx.Err() != nil {
		return bwrapProbe{}, fmt.Errorf("probing for bubblewrap: %w", ctx.Err())
	}
	if stoppedAtDeadline(err) { // a slow host, not a finding: asked again next time
		return bwrapProbe{}, fmt.Errorf("probing for bubblewrap: no answer within %v", probeTimeout)
	}
	res := bwrapProbe{ok: stdout.String() == probeOK+"\n"}
	if !res.ok {
		res.why = probeFailure(stderr.String())
	}
	c.record(cl, res)
	return res, nil
}

// stoppedAtDeadline reports whether the wrapper's timeout(1) ended the
// command: exit 124 after its SIGTERM, or death by its SIGKILL.
func stoppedAtDeadline(err error) bool {
	var exit *ssh.ExitError
	return errors.As(err, &exit) && (exit.ExitStatus() == 124 || exit.Signal() == "KILL")
}

// probeFailure is why the probe failed, in a few words from its stderr.
func probeFailure(stderr string) string {
	var lines []string
	for l := range strings.Lines(stderr) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "opsbot-pid:") {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 0:
		return "does not work there"
	case strings.Contains(lines[0], "bwrap") && strings.Contains(lines[0], "No such file"):
		return "not installed"
	}
	why := lines[0]
	if len(why) > 200 {
		why = why[:200] + "…"
	}
	return why
}

// RemoteSandbox reports what holds the commands that run without approval
// on the SSH host h, and when bubblewrap is not it, why (in the host's
// words): RemoteBwrap when bubblewrap works over the connection such
// commands use (as the host's readonly_user, when one is set), else
// RemoteReadOnlyUser when a readonly_user is set, else RemoteNone. It
// probes the host once per connection, connecting if needed; an error
// means the host could not be asked.
func (p *Pool) RemoteSandbox(ctx context.Context, h Host) (RemoteSandbox, string, error) {
	c, err := p.conn(h, p.userFor(h, true))
	if err != nil {
		return "", "", fmt.Errorf("hosts: %s: %w", h.Name, err)
	}
	pr, err := c.bwrap(ctx)
	if err != nil {
		return "", "", fmt.Errorf("hosts: %s: %w", h.Name, err)
	}
	return p.sandboxKind(h, pr), pr.why, nil
}

func (p *Pool) sandboxKind(h Host, pr bwrapProbe) RemoteSandbox {
	switch {
	case pr.ok:
		return RemoteBwrap
	case h.ReadOnlyUser != "" || p.cfg.ReadOnlyUser != "":
		return RemoteReadOnlyUser
	}
	return RemoteNone
}

// SandboxMode is h's remote_sandbox: its own from the inventory, else the
// pool's (RemoteSandboxMode), else required.
func (p *Pool) SandboxMode(h Host) string {
	switch {
	case h.RemoteSandbox != "":
		return h.RemoteSandbox
	case p.RemoteSandboxMode != "":
		return p.RemoteSandboxMode
	}
	return RemoteSandboxRequired
}

// MissingSandbox is a *NoSandboxError when h has no sandbox for the
// commands that run without approval (RemoteNone) and its remote_sandbox
// is required: the policy then asks a person instead. Nil otherwise, and
// when the host cannot be asked (its commands fail to connect, or Run
// refuses them should the probe find nothing then).
func (p *Pool) MissingSandbox(ctx context.Context, h Host) error {
	if p.SandboxMode(h) != RemoteSandboxRequired {
		return nil
	}
	kind, why, err := p.RemoteSandbox(ctx, h)
	if err != nil || kind != RemoteNone {
		return nil
	}
	return &NoSandboxError{Host: h.Name, Why: why}
}

// KnownMissingSandbox is MissingSandbox without asking the host: a
// *NoSandboxError only when a probe (or a first command carrying it) on
// the current connection already found no sandbox, else nil. It never
// connects. It is for decisions on commands no sandbox holds (`opsbot
// hosts exec`, a person's own command line): an unapproved command's
// decision asks with MissingSandbox, and its run refuses on a host found
// without one whatever was decided (confinement).
func (p *Pool) KnownMissingSandbox(h Host) error {
	if p.SandboxMode(h) != RemoteSandboxRequired || h.Address == "" {
		return nil
	}
	c, err := p.conn(h, p.userFor(h, true))
	if err != nil {
		return nil
	}
	pr := c.known()
	if pr == nil {
		return nil
	}
	if p.sandboxKind(h, *pr) != RemoteNone {
		return nil
	}
	return &NoSandboxError{Host: h.Name, Why: pr.why}
}

// confinement decides how an unapproved command runs on the connection c
// of h: in bubblewrap (box), as the connection's (read-only) user, or, on
// a host with neither, as that user too when h's remote_sandbox is
// best_effort or the command is a scheduled check, else not at all. While
// c's sandbox is unknown, the command may carry the probe itself (fold:
// in bubblewrap, marked; see remote_sandbox_fold.go).
func (p *Pool) confinement(ctx context.Context, c *conn, h Host, opts Options) (box, fold bool, err error) {
	if foldable(c, opts) {
		return true, true, nil
	}
	pr, err := c.bwrap(ctx)
	if err != nil {
		return false, false, err
	}
	box, err = p.confineAs(h, pr, opts)
	return box, false, err
}

// confineAs is confinement on a host whose probe found pr.
func (p *Pool) confineAs(h Host, pr bwrapProbe, opts Options) (box bool, err error) {
	kind := p.sandboxKind(h, pr)
	if kind == RemoteNone && p.SandboxMode(h) == RemoteSandboxRequired && !opts.Scheduled {
		return false, &NoSandboxError{Host: h.Name, Why: pr.why}
	}
	return kind == RemoteBwrap, nil
}
