// Command opsbot is the chat-ops bot: the composition root that reads the
// config file, builds each package from its section, and wires them.
//
// Exit codes: 0 success; 1 failure (a command failed, a host was
// unreachable); 2 usage or configuration error; 3 and 4 are the policy
// decisions "approve" and "deny" of `opsbot policy check`.
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
			fmt.Fprintln(os.Stderr, "opsbot:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "opsbot:", err)
	if isUsage(err) {
		return exitUsage
	}
	return exitFailure
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "opsbot",
		Short: "opsbot is a chat-ops bot: an agent that investigates your fleet from a chat thread",
		Long: `opsbot is a chat-ops bot for team channels. Mention it in a thread; it investigates
with tools (commands on your hosts over SSH and on its own host), asks a person to
approve anything risky, and answers in the thread.

Exit codes: 0 ok, 1 failure, 2 usage or configuration error,
3/4 the "approve"/"deny" decisions of 'opsbot policy check'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "config file (YAML); without it the embedded default is used")
	root.PersistentFlags().String("log-level", "", "log level: debug, info, warn or error (overrides log.level)")
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
	)
	return root
}
