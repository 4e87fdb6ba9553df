package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// execCheck is the approval policy's seam for `opsbot hosts exec`: asked
// once per host before the command runs there, it returns nil to let it
// run, or an error saying why not (printed for that host, which then
// counts as failed). Nil allows everything. The approvals package plugs in
// here; this file must not import it.
type execCheck func(ctx context.Context, host hosts.Host, command string) error

// hostsCmd holds what the `hosts` subcommands share.
type hostsCmd struct {
	// check is consulted by `hosts exec` before each host; see execCheck.
	check execCheck
}

func newHostsCmd() *cobra.Command {
	// The policy is applied once for the whole target by authorizeExec;
	// check stays for per-host rules a caller may add.
	h := &hostsCmd{check: nil}
	c := &cobra.Command{
		Use:   "hosts",
		Short: "Check and run commands on the inventory's hosts",
		Long: `Work with the hosts of the config's inventory: the ssh and hosts sections, plus
the built-in host 'local' (this machine).

A TARGET is a host name, group:NAME, or a comma list of those, e.g. web-1,group:db.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do: 'opsbot hosts list', 'opsbot hosts ping [TARGET...]' or 'opsbot hosts exec TARGET -- COMMAND'"))
		},
		Example: "  opsbot hosts list\n  opsbot hosts ping group:web\n  opsbot hosts exec db-1 -- uptime",
	}
	c.AddCommand(listHostsCmd(), h.pingCmd(), h.execCmd())
	return c
}

func listHostsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list [TARGET...]",
		Short: "List the inventory's hosts: address, user, groups, sandbox; without connecting",
		Long: `List the hosts of the config's inventory (all of them, 'local' included, when no
TARGET is given) as the config says, without connecting to any: name, address,
the SSH user (and the read-only user that runs the commands allowed without
approval, when one is set), groups, and what the policy requires of the host's
sandbox for those commands (remote_sandbox). 'opsbot hosts ping' connects and
says what each host really has.`,
		Example: "  opsbot hosts list --config /etc/opsbot/opsbot.yaml\n  opsbot hosts list group:db",
		RunE: func(cmd *cobra.Command, targets []string) error {
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			inv, err := hosts.NewInventory(cfg.Hosts)
			if err != nil {
				return usageError(err)
			}
			list := inv.Hosts()
			if len(targets) > 0 {
				if list, err = inv.Resolve(strings.Join(targets, ",")); err != nil {
					return usageError(withListHint(err))
				}
			}
			return printHosts(cmd.OutOrStdout(), cfg, list)
		},
	}
}

// printHosts writes the inventory as a table, from the config alone.
func printHosts(w io.Writer, cfg *Config, list []hosts.Host) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tADDRESS\tUSER\tGROUPS\tSANDBOX")
	for _, h := range list {
		if h.IsLocal() {
			fmt.Fprintf(tw, "%s\t-\t-\t%s\tthis machine's (opsbot run logs it; /readyz)\n", h.Name, orDash(strings.Join(h.Groups, ",")))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Name, h.Address, hostUser(cfg.Hosts.SSH, h), orDash(strings.Join(h.Groups, ",")), sandboxRule(cfg, h))
	}
	return tw.Flush()
}

// hostUser is the SSH user of h, and its read-only user when it has one.
func hostUser(ssh hosts.SSHConfig, h hosts.Host) string {
	user := cmp.Or(h.User, ssh.User, "(the bot's own)")
	if ro := cmp.Or(h.ReadOnlyUser, ssh.ReadOnlyUser); ro != "" {
		user += ", read-only " + ro
	}
	return user
}

// sandboxRule says what the host's remote_sandbox asks for the commands
// that run without approval.
func sandboxRule(cfg *Config, h hosts.Host) string {
	if cmp.Or(h.RemoteSandbox, cfg.Policy.RemoteSandboxMode()) == hosts.RemoteSandboxBestEffort {
		return "bwrap if installed (best_effort)"
	}
	return "bwrap required, else approval (required)"
}

func orDash(s string) string { return cmp.Or(s, "-") }

func (h *hostsCmd) pingCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "ping [TARGET...]",
		Short: "Connect to hosts and run 'true' on each; print a table",
		Long: `Connect to each target host (all of them, 'local' included, when no TARGET is
given) and run 'true' there, then print a table: host, address, latency (connect
included), and ok or the error. Exits 1 if any host failed, 2 for a usage or
configuration error (a bad TARGET, a key file missing or unreadable).`,
		Example: "  opsbot hosts ping --config /etc/opsbot/opsbot.yaml\n  opsbot hosts ping group:web db-1",
		RunE: func(cmd *cobra.Command, targets []string) error {
			timeout, _ := cmd.Flags().GetDuration("timeout")
			return h.ping(cmd, targets, timeout)
		},
	}
	c.Flags().Duration("timeout", 10*time.Second, "time limit per host, connect included")
	return c
}

func (h *hostsCmd) execCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "exec TARGET -- COMMAND...",
		Short: "Run a shell command on hosts, output prefixed with each host's name",
		Long: `Run COMMAND (the words after --, joined by spaces, run by sh -c on SSH hosts and
bash -c on 'local') on every host of TARGET at once. Each output line is prefixed
with its host's name: stdout to stdout, stderr to stderr. A host that fails says
why on stderr.

Exit codes: 0 when the command succeeded on every host; otherwise the worst of
the hosts' codes: the command's own code (124 for one stopped at its deadline), or
255 when the command did not run: a host could not be reached, the policy denied
the command, or its approval was refused (answered N, or no terminal to ask on).
2 is a usage or configuration error (a bad TARGET, a missing key file).`,
		Example: "  opsbot hosts exec group:web -- uptime\n  opsbot hosts exec web-1,web-2 -- 'df -h / | tail -1'",
		Args: func(cmd *cobra.Command, a []string) error {
			if cmd.ArgsLenAtDash() != 1 || len(a) < 2 {
				return usageError(fmt.Errorf("want TARGET -- COMMAND (see '%s --help')", cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			timeout, _ := cmd.Flags().GetDuration("timeout")
			dir, _ := cmd.Flags().GetString("dir")
			return h.exec(cmd, a[0], strings.Join(a[1:], " "), hosts.Options{Timeout: timeout, Dir: dir})
		},
	}
	c.Flags().Duration("timeout", 0, "the command's deadline (default: exec.timeout of the config, 60s)")
	c.Flags().String("dir", "", "working directory on the hosts")
	addDataDirFlag(c)
	return c
}

// fleet loads the config and builds the fleet, with a context that ends
// on SIGINT or SIGTERM.
func fleet(cmd *cobra.Command) (*hosts.Fleet, context.Context, func(), error) {
	cfg, err := loadConfigFlag(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := hosts.NewFleet(cfg.Hosts)
	if err != nil {
		return nil, nil, nil, usageError(err)
	}
	if f.Pool != nil {
		f.Pool.RemoteSandboxMode = cfg.Policy.RemoteSandboxMode()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	return f, ctx, func() { stop(); _ = f.Close() }, nil
}

// resolve turns the arguments into hosts: every host when there are none.
func resolve(f *hosts.Fleet, targets []string) ([]hosts.Host, error) {
	if len(targets) == 0 {
		return f.Inventory.Hosts(), nil
	}
	list, err := f.Inventory.Resolve(strings.Join(targets, ","))
	if err != nil {
		return nil, usageError(withListHint(err))
	}
	return list, nil
}

// withListHint adds to an unknown host or group the command, as typed at
// the terminal, that lists every host with its address.
func withListHint(err error) error {
	var unknown *hosts.UnknownTargetError
	if errors.As(err, &unknown) {
		return fmt.Errorf("%w ('opsbot hosts list' shows each one)", err)
	}
	return err
}

func (h *hostsCmd) ping(cmd *cobra.Command, targets []string, timeout time.Duration) error {
	f, ctx, done, err := fleet(cmd)
	if err != nil {
		return err
	}
	defer done()
	list, err := resolve(f, targets)
	if err != nil {
		return err
	}
	results := hosts.RunMany(ctx, pingRunner{f, timeout}, list, "true", hosts.Options{Timeout: timeout}, hosts.FanOut{Limit: len(list)})
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tADDRESS\tLATENCY\tSTATUS\tSANDBOX")
	failed := 0
	for _, r := range results {
		addr := r.Host.Address
		if r.Host.IsLocal() {
			addr = "-"
		}
		status := "ok"
		if err := pingError(r); err != nil {
			failed++
			status = "error: " + strings.TrimPrefix(err.Error(), "hosts: "+r.Host.Name+": ")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Host.Name, addr, r.Result.Duration.Round(100*time.Microsecond), status, pingSandbox(ctx, f, r, timeout))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("%d of %d hosts failed", failed, len(results)), silent: true}
	}
	return nil
}

// pingRunner bounds each host's whole ping (connect included) by timeout.
type pingRunner struct {
	r       hosts.Runner
	timeout time.Duration
}

func (p pingRunner) Run(ctx context.Context, h hosts.Host, command string, o hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, p.timeout, fmt.Errorf("no answer within %v", p.timeout))
	defer cancel()
	start := time.Now()
	res, err := p.r.Run(ctx, h, command, o, onChunk)
	res.Duration = time.Since(start)
	return res, err
}

// pingSandbox is what holds the commands allowed without approval on an
// SSH host that answered (bwrap, readonly_user, none…): "-" for the
// local host (see /readyz) and a host that did not answer.
func pingSandbox(ctx context.Context, f *hosts.Fleet, r hosts.HostResult, timeout time.Duration) string {
	if r.Host.IsLocal() || pingError(r) != nil || f.Pool == nil {
		return "-"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return describeRemoteSandbox(ctx, f.Pool, r.Host)
}

// pingError says why a ping failed, or nil.
func pingError(r hosts.HostResult) error {
	switch {
	case r.Err != nil:
		return r.Err
	case !r.Result.OK():
		return fmt.Errorf("'true' ended with %s", r.Result.Status())
	}
	return nil
}

// exec runs command on target's hosts: through the policy first, then
// audited in the name of the person at the terminal, its output redacted
// as every boundary's is.
func (h *hostsCmd) exec(cmd *cobra.Command, target, command string, opts hosts.Options) error {
	f, ctx, done, err := fleet(cmd)
	if err != nil {
		return err
	}
	defer done()
	list, err := resolve(f, []string{target})
	if err != nil {
		return err
	}
	cfg, err := loadPlacedConfig(cmd)
	if err != nil {
		return err
	}
	cfg.noteStore(cmd.ErrOrStderr(), os.Getenv)
	st, err := store.Open(ctx, cfg.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := authorizeExec(ctx, cmd, cfg, st, f, target, command, opts.Dir); err != nil {
		return err
	}
	red := cfg.redactor()
	out := newPrefixer(cmd.OutOrStdout(), cmd.ErrOrStderr(), list)
	out.red = red
	worst := 0
	hosts.RunMany(ctx, auditedExec(cfg, st, f, h.gated(f)), list, command, opts, hosts.FanOut{
		OnChunk: out.chunk,
		OnResult: func(r hosts.HostResult) {
			out.flush(r.Host.Name)
			worst = max(worst, out.result(r))
		},
	})
	if worst != 0 {
		return &exitError{code: worst, err: fmt.Errorf("exit %d", worst), silent: true}
	}
	return nil
}

// gated runs each host's command through the approval check first.
func (h *hostsCmd) gated(r hosts.Runner) hosts.Runner {
	if h.check == nil {
		return r
	}
	return hosts.RunnerFunc(func(ctx context.Context, host hosts.Host, command string, o hosts.Options, onChunk func(hosts.Chunk)) (hosts.Result, error) {
		if err := h.check(ctx, host, command); err != nil {
			return hosts.Result{Host: host.Name, ExitCode: -1}, fmt.Errorf("refused: %w", err)
		}
		return r.Run(ctx, host, command, o, onChunk)
	})
}

// prefixer writes output lines prefixed with their host's name, keeping
// each host's partial line until it is complete (or too long to wait for).
type prefixer struct {
	stdout, stderr io.Writer
	width          int
	partial        map[string]*bytes.Buffer // by host and stream
	// red redacts each line before it is written (nil: as it is).
	red *redact.Redactor
}

// maxPartial is how long a line may grow before it is written unfinished.
const maxPartial = 64 << 10

func newPrefixer(stdout, stderr io.Writer, list []hosts.Host) *prefixer {
	p := &prefixer{stdout: stdout, stderr: stderr, partial: map[string]*bytes.Buffer{}}
	for _, h := range list {
		p.width = max(p.width, len(h.Name))
	}
	return p
}

// chunk takes streamed output; RunMany never calls it concurrently.
func (p *prefixer) chunk(c hosts.Chunk) {
	key := c.Host + "\x00" + c.Stream.String()
	buf := p.partial[key]
	if buf == nil {
		buf = &bytes.Buffer{}
		p.partial[key] = buf
	}
	buf.Write(c.Data)
	for {
		line, err := buf.ReadBytes('\n')
		if err != nil { // no newline: keep the rest for later
			rest := append([]byte(nil), line...)
			buf.Reset()
			buf.Write(rest)
			break
		}
		p.write(c.Host, c.Stream, line)
	}
	if buf.Len() > maxPartial {
		p.write(c.Host, c.Stream, append(buf.Bytes(), '\n'))
		buf.Reset()
	}
}

// flush writes a host's unfinished lines once it is done.
func (p *prefixer) flush(host string) {
	for _, s := range []hosts.Stream{hosts.Stdout, hosts.Stderr} {
		if buf := p.partial[host+"\x00"+s.String()]; buf != nil && buf.Len() > 0 {
			p.write(host, s, append(buf.Bytes(), '\n'))
			buf.Reset()
		}
	}
}

func (p *prefixer) write(host string, s hosts.Stream, line []byte) {
	w := p.stdout
	if s == hosts.Stderr {
		w = p.stderr
	}
	if p.red != nil {
		line = p.red.Bytes(line)
	}
	fmt.Fprintf(w, "%-*s | %s", p.width, host, line)
}

// result reports a host's end on stderr unless it succeeded, and returns
// its exit code for the worst-of: exitNotRun when it could not run.
func (p *prefixer) result(r hosts.HostResult) int {
	switch {
	case r.Err != nil:
		p.write(r.Host.Name, hosts.Stderr, []byte(fmt.Sprintf("error: %s\n", hosts.Reason(r.Err))))
		return exitNotRun
	case !r.Result.OK():
		fmt.Fprintf(p.stderr, "%-*s | %s\n", p.width, r.Host.Name, r.Result.Status())
		return min(max(r.Result.ExitCode, 1), 255)
	}
	return 0
}
