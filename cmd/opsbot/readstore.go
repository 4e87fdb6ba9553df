package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/store"
)

// openReadStore opens the database of the config and --data-dir for
// reading only, as the operator commands do: beside a running bot (WAL
// lets a reader in; the bot's lock is not needed), creating nothing. A
// database that is missing or of another schema is the person's to fix:
// exit 2, saying how.
func openReadStore(cmd *cobra.Command) (*store.Store, *Config, error) {
	cfg, err := loadReadConfig(cmd)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.OpenReadOnly(cmd.Context(), cfg.Store)
	path := cfg.Store.WithDefaults().Path
	if err == nil {
		if cfg.storeFound {
			fmt.Fprintf(cmd.ErrOrStderr(), "opsbot: reading the database make run keeps, %s (--data-dir DIR or --config FILE reads another)\n", path)
		}
		return st, cfg, nil
	}
	switch {
	case errors.Is(err, store.ErrNoDatabase) && cfg.file == "" && cfg.dataDir == "":
		return nil, nil, usageError(fmt.Errorf("no database found at %s: start the bot first (make run, or opsbot run), or point --data-dir DIR or --config FILE at the bot's database", defaultStorePlaces(os.Getenv)))
	case errors.Is(err, store.ErrNoDatabase):
		return nil, nil, usageError(fmt.Errorf("there is no database at %s: point %s at the bot's database", path, cfg.storeSetting()))
	case errors.Is(err, store.ErrOlderSchema):
		return nil, nil, usageError(fmt.Errorf("the database at %s is older than this opsbot: run 'opsbot migrate' with the bot stopped, or start the bot, which migrates it", path))
	case errors.Is(err, store.ErrNewerSchema):
		return nil, nil, usageError(fmt.Errorf("the database at %s was written by a newer opsbot: use that version's binary", path))
	}
	return nil, nil, err
}

// loadReadConfig is the config with --data-dir applied, creating
// nothing: a mistyped folder is reported, not made. A command that reads
// only the database needs only store: and bot.data_dir: to be right; a
// problem elsewhere (an unset webhook secret, a missing key file) does
// not stop it.
func loadReadConfig(cmd *cobra.Command) (*Config, error) {
	cfg := defaultConfig()
	if path, _ := cmd.Flags().GetString("config"); path != "" {
		var placed []string
		if dir, _ := cmd.Flags().GetString("data-dir"); dir != "" {
			placed = []string{"store.path", "bot.data_dir"}
		}
		var err error
		if cfg, err = loadConfigKeeping(path, storeKey, placed...); err != nil {
			return nil, usageError(err)
		}
	}
	if err := cfg.applyPlaceFlags(cmd, os.Getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// storeKey reports whether a config key says where the database is (or,
// for approvals list, who may approve).
func storeKey(key string) bool {
	return key == "store" || strings.HasPrefix(key, "store.") || key == "bot.data_dir" || key == "bot" ||
		key == "approvals" || strings.HasPrefix(key, "approvals.")
}

// personText shows a stored person's key ("slack:U1") as @U1 for a
// terminal; opsbot's own actors and empty keys stay as they are.
func personText(key string) string {
	switch _, id, ok := strings.Cut(key, ":"); {
	case key == "":
		return "-"
	case ok && !strings.HasPrefix(key, "opsbot"):
		return "@" + id
	}
	return key
}

// untilText says when t comes, from now, the way people do: "in 12
// minutes", "in 1 hour 5 minutes", "2 minutes ago".
func untilText(t, now time.Time) string {
	d := t.Sub(now)
	ago := d < 0
	if ago {
		d = -d
	}
	if d >= time.Minute {
		d = d.Round(time.Minute)
	}
	if ago {
		return approvals.HumanDuration(d) + " ago"
	}
	return "in " + approvals.HumanDuration(d)
}

// parseWhen reads a flag's time: a duration back from now ("24h", "90m",
// "7d" for days), a date ("2026-11-27", local midnight) or a time
// (RFC 3339, or "2026-11-27 14:00" local).
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := time.ParseDuration(days + "h"); err == nil {
			return now.Add(-24 * d), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageError(fmt.Errorf("--%s %q: give a duration back from now (24h, 90m, 7d), a date (2026-11-27) or a time (2026-11-27 14:00, or RFC 3339)", flag, s))
}
