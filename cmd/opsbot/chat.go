package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/connectors/console"
)

func newChatCmd() *cobra.Command {
	return addDataDirFlag(&cobra.Command{
		Use:     "chat",
		Example: "  opsbot chat\n  opsbot chat --config /etc/opsbot/opsbot.yaml --data-dir ~/.opsbot",
		Short:   "Talk with opsbot in the terminal: the chat commands, and the agent when a model is set",
		Long: `A conversation in the terminal, one thread across lines, as in the web chat: the
chat commands work with or without a model (help, run <target> <command>, jobs,
job <id>, cancel <job id>, hosts, approvals, reset), and any other line is a question for the
agent when a model is configured. A command that needs approval is asked y/N here
(without a terminal it is denied). Ctrl-C stops the running answer or command;
Ctrl-D (or Ctrl-C at the prompt) ends the chat.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadPlacedConfig(cmd)
			if err != nil {
				return err
			}
			log, err := cfg.terminalLogger(cmd)
			if err != nil {
				return err
			}
			return runChat(cmd.Context(), cmd, cfg, log)
		},
	})
}

// runChat runs the bot with the terminal as its one platform.
func runChat(ctx context.Context, cmd *cobra.Command, cfg *Config, logger *slog.Logger) error {
	f, err := openConsoleFront(ctx, cmd, cfg, logger)
	if err != nil {
		return err
	}
	defer f.end()
	agentState := "agent off: the chat commands work; set ANTHROPIC_API_KEY or OPENAI_API_KEY/OPENAI_BASE_URL for questions"
	if f.rt.provider != nil {
		agentState = "agent: " + f.rt.model
	}
	fmt.Fprintf(f.term.Err, "opsbot chat (%s). Type help for the commands. Ctrl-C stops a command, Ctrl-D ends.\n", agentState)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	thread := fmt.Sprintf("chat-%d", time.Now().UnixNano())
	for n := 1; ; n++ {
		line, err := readLine(ctx, f.term, sigs)
		if err != nil {
			fmt.Fprintln(f.term.Err)
			if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		f.conn.Say(ctx, console.Line{Thread: thread, ID: thread + "-" + strconv.Itoa(n), Text: line}, sigs)
	}
}

// readLine reads the next line; Ctrl-C at the prompt ends the chat.
func readLine(ctx context.Context, term *console.Terminal, sigs <-chan os.Signal) (string, error) {
	lineCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-lineCtx.Done():
		}
	}()
	return term.ReadLine(lineCtx, "\nyou> ")
}
