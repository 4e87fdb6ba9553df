package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/connectors/console"
	"github.com/opsbot/opsbot/store"
)

func newAskCmd() *cobra.Command {
	return addDataDirFlag(&cobra.Command{
		Use:     "ask QUESTION",
		Example: "  opsbot ask 'why is the disk on web-1 filling up?'\n  ANTHROPIC_API_KEY=… opsbot ask --config /etc/opsbot/opsbot.yaml 'is nginx up on group:web?'",
		Short:   "Ask the agent one question; the answer streams to stdout",
		Long: `Run one agent turn in the terminal: the answer streams to stdout as it arrives, tool
activity goes to stderr, and a command that needs approval is asked y/N on the
terminal (without a terminal it is denied, and the model is told so). Ctrl-C
cancels the turn. Exit 0 when the turn completed, 1 when it failed or was cancelled.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			question := strings.TrimSpace(strings.Join(a, " "))
			if question == "" {
				return usageError(errors.New(`ask needs a question, e.g. opsbot ask "how full is the disk on web-1?"`))
			}
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			// Without a model there is nothing to ask: say what to set
			// before opening the database or starting anything.
			if p, _, err := newProvider(cfg.Agent); err == nil && p == nil {
				return usageError(errAgentOff)
			}
			if err := cfg.applyRunFlags(cmd, os.Getenv); err != nil {
				return err
			}
			log, err := cfg.terminalLogger(cmd)
			if err != nil {
				return err
			}
			return ask(cmd.Context(), cmd, cfg, log, question)
		},
	})
}

// ask puts one question to the agent through the bot, the terminal its
// platform, in a thread of its own whose commands run in the current
// directory. Ctrl-C stops the turn.
func ask(ctx context.Context, cmd *cobra.Command, cfg *Config, logger *slog.Logger, question string) error {
	f, err := openConsoleFront(ctx, cmd, cfg, logger)
	if err != nil {
		return err
	}
	defer f.end()
	if f.rt.provider == nil {
		return usageError(errAgentOff)
	}
	thread := fmt.Sprintf("ask-%d", time.Now().UnixNano())
	sess, _, err := f.rt.store.Sessions().SessionFor(ctx, store.ThreadKey{Platform: f.conn.Name(), Channel: f.user, Thread: thread})
	if err != nil {
		return err
	}
	if dir, err := os.Getwd(); err == nil {
		if err := f.rt.store.Sessions().SetSessionCwd(ctx, sess.ID, dir); err != nil {
			return err
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	f.conn.Say(ctx, console.Line{Thread: thread, ID: thread, Text: question, Question: true}, sigs)
	return turnOutcome(ctx, f.rt.store, sess.ID)
}

// turnOutcome is ask's exit: 0 when the turn completed, 1 when it was
// cancelled or failed (its answer's last line said why).
func turnOutcome(ctx context.Context, st *store.Store, session int64) error {
	t, err := st.Sessions().LastTurn(ctx, session)
	switch {
	case err != nil:
		return err
	case t.Status == store.TurnDone:
		return nil
	case t.Status == store.TurnCancelled:
		return &exitError{code: exitFailure, err: errors.New("cancelled; the turn is not kept in the conversation")}
	}
	return &exitError{code: exitFailure, err: errors.New("the answer did not complete: its last line says why")}
}
