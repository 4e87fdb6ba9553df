package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/store"
)

// Set at build time: go build -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = "unknown"
)

// isUsage tells cobra's own usage errors (unknown command, wrong number of
// arguments) from failures.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// args wraps a cobra argument validator so that its error exits with 2.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return usageError(fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath()))
		}
		return nil
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Example: "  opsbot version",
		Short:   "Print the version and the commit it was built from",
		Args:    args(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "opsbot %s (commit %s, %s, schema %d)\n", version, commit, runtime.Version(), store.LatestSchema())
		},
	}
}

func newConfigCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "config",
		Example: "  opsbot config check --config /etc/opsbot/opsbot.yaml",
		Short:   "Work with the config file",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do with the config: 'opsbot config check --config FILE'"))
		},
	}
	c.AddCommand(&cobra.Command{
		Use:     "check",
		Example: "  opsbot config check --config /etc/opsbot/opsbot.yaml\n  SLACK_BOT_TOKEN=xoxb-… opsbot config check --config deploy/opsbot.example.yaml",
		Short:   "Validate a config file: every problem with its line and key; exit 2 if any",
		Long: `Validate a config file and report every problem found, each as FILE:LINE: KEY: what is
expected. Exit 0 when the file is valid, 2 when it is not. Environment variables
referenced as ${NAME} must be set, and the files it names (ssh.known_hosts,
ssh.identity_files, agent.skill_dirs, the folder of store.path) must exist and be
readable, as 'opsbot run' needs them.

A valid file can still leave nobody able to approve a command, e.g. a web chat open to
other machines with no web approver: such a problem is a warning naming the key to add
(exit 0).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, _ := cmd.Flags().GetString("config")
			if path == "" {
				return usageError(errors.New("config check needs --config FILE"))
			}
			cfg, err := loadConfig(path)
			if err != nil {
				for _, e := range flatten(err) {
					fmt.Fprintln(cmd.ErrOrStderr(), e)
				}
				return &exitError{code: exitUsage, err: err, silent: true}
			}
			warnings := cfg.warnings()
			if note := noFullTextNote(); note != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: "+note)
			}
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			if len(warnings) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok, with %d warning(s)\n", path, len(warnings))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", path)
			return nil
		},
	})
	return c
}

func newMigrateCmd() *cobra.Command {
	return addDataDirFlag(&cobra.Command{
		Use:     "migrate",
		Example: "  opsbot migrate --data-dir /var/lib/opsbot\n  opsbot migrate --config /etc/opsbot/opsbot.yaml",
		Short:   "Create or upgrade the database to this version's schema, then exit",
		Long: `Open the database named by --data-dir (DIR/opsbot.db) or store.path (default
./opsbot.db, or when that is missing the one 'make run' keeps), apply the migrations
it lacks, and print its schema version. 'opsbot run' does the same on start; this
command lets you do it ahead of a deploy. A database written by a newer opsbot is
refused (exit 1) and left untouched. While 'opsbot run' uses the database (it holds
DB.lock), migrate refuses (exit 2) and changes nothing: stop the bot first.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadPlacedConfig(cmd)
			if err != nil {
				return err
			}
			// A running bot migrated at its own start; a newer binary's
			// migration under it would change the schema it works on.
			unlock, err := lockStore(cfg.Store.WithDefaults().Path, cfg.storeSetting())
			if err != nil {
				return err
			}
			defer unlock()
			cfg.noteStore(cmd.ErrOrStderr(), os.Getenv)
			ctx := context.Background()
			st, err := store.Open(ctx, cfg.Store)
			if err != nil {
				return err
			}
			defer st.Close()
			v, err := st.SchemaVersion(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: schema version %d (latest)\n", st.Path(), v)
			return nil
		},
	})
}
