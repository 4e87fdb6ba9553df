package main

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/agent"
)

// unusedByHealth are the config's sections the health commands never
// read: they post nothing (a report goes to chat from the running bot)
// and ask no model.
var unusedByHealth = []string{"slack", "discord", "agent"}

// loadHealthConfig is loadPlacedConfig for the health commands: a problem
// in a section they never read — a chat token not exported in this shell —
// does not stop them. Every other problem is reported as `config check`
// reports it. The agent section is left empty: no model is built.
func loadHealthConfig(cmd *cobra.Command) (*Config, error) {
	path, _ := cmd.Flags().GetString("config")
	data, err := os.ReadFile(path)
	if path == "" || err != nil {
		return loadPlacedConfig(cmd) // the default config, or the file's problem said as always
	}
	cfg, errs := decodeConfig(path, data, os.LookupEnv)
	if cfg != nil {
		errs = appendUnshadowed(errs, flatten(cfg.checkFiles()))
	}
	errs = slices.DeleteFunc(errs, inUnusedSection)
	if len(errs) > 0 || cfg == nil {
		return nil, usageError(joinSorted(errs))
	}
	cfg.Agent = agent.Config{}
	if err := cfg.applyRunFlags(cmd, os.Getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// inUnusedSection reports whether err is a problem of a section the
// health commands never read.
func inUnusedSection(err error) bool {
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return false
	}
	return slices.ContainsFunc(unusedByHealth, func(section string) bool {
		return ce.Key == section || strings.HasPrefix(ce.Key, section+".")
	})
}
