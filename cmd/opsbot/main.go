// Command opsbot is the chat-ops bot: the composition root that reads the
// config file, builds each package from its section, and wires them.
//
// Exit codes: 0 success; 1 failure (a command failed, a host was
// unreachable); 2 usage or configuration error (bad arguments, a config
// file with a problem, a file it names missing or unreadable), the same for
// every subcommand, and for a port or a database another process uses; 3 and 4 are the policy decisions "approve" and "deny"
// of `opsbot policy check`; `opsbot hosts exec` passes on the command's own
// code, or 255 when the command did not run (unreachable, refused).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitNotRun is `hosts exec`'s code for a command that did not run: a
	// host unreachable, or the command refused (ssh's 255 for its own
	// failures).
	exitNotRun = 255
)

// exitError carries a specific exit code out of a subcommand. With silent
// set, the command has already said everything it had to say.
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as the user's to fix: exit code 2.
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

func main() {
	os.Exit(execute(os.Args[1:]))
}

// execute runs the CLI and maps its outcome to an exit code.
func execute(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.silent {
			report(ee.err)
		}
		return ee.code
	}
	report(err)
	if isUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// report prints an error on stderr, each of joined errors (every problem
// of a config file) on a line of its own.
func report(err error) {
	for _, e := range flatten(err) {
		fmt.Fprintln(os.Stderr, "opsbot:", e)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "opsbot",
		Short: "opsbot is a chat-ops bot: an agent that investigates your fleet from a chat thread",
		Long: `opsbot is a chat-ops bot for team channels. Mention it in a thread; it investigates
with tools (commands on your hosts over SSH and on its own host), asks a person to
approve anything risky, and answers in the thread.

Exit codes, the same for every command: 0 ok, 1 failure, 2 usage or configuration
error (bad arguments; a config file with a problem, or a file it names that is
missing or unreadable; it cannot start as configured: its port or its database in
use by another process); 3/4 the "approve"/"deny" decisions of 'opsbot policy check';
'opsbot hosts exec' passes on the command's own code, or 255 when it did not run.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "config file (YAML); without it the embedded default is used")
	root.PersistentFlags().String("log-level", "", "log level: debug, info, warn or error (overrides log.level; chat, ask and health run log warn and above unless given)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	root.AddCommand(
		newRunCmd(),
		newHostsCmd(),
		newConfigCmd(),
		newMigrateCmd(),
		newVersionCmd(),
		newAskCmd(),
		newChatCmd(),
		newPolicyCmd(),
		newHealthCmd(),
		newApprovalsCmd(),
		newSessionsCmd(),
		newAuditCmd(),
		newStatsCmd(),
		newBackupCmd(),
		newSlackCmd(),
		newAlertsCmd(),
		newMCPCmd(),
	)
	return root
}
