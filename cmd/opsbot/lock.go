package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/store"
	"golang.org/x/sys/unix"
)

// lockStore takes the exclusive lock beside the database (DB.lock), so that
// a second opsbot on the same database refuses to start instead of taking
// the first one's running jobs and live streams for a crash's leftovers.
// The lock file holds the owner's pid; the lock ends with the process.
//
// other says how to give this process another database, in the words of
// the setting the person used (see storeSetting).
func lockStore(db, other string) (release func(), err error) {
	if err := store.CheckFolder(db); err != nil {
		return nil, usageError(err)
	}
	f, err := os.OpenFile(db+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, usageError(fmt.Errorf("cannot create the lock file %s.lock beside the database: %w", db, err))
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(db + ".lock")
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, usageError(fmt.Errorf("another opsbot (pid %s) is using %s; stop it, or give this one another database with %s", pid, db, other))
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// storeSetting names, for a person, the setting that chose the database:
// --data-dir (DATA_DIR when `make run` passed it on, as it says in
// OPSBOT_DATA_DIR_FROM; MAKELEVEL would not do, as every make sets it),
// store.path in the config file, or, for the default ./opsbot.db, the
// flag to choose another.
func (c *Config) storeSetting() string {
	switch {
	case c.dataDir != "" && os.Getenv("OPSBOT_DATA_DIR_FROM") == "DATA_DIR": // make run says so
		return "DATA_DIR (make run DATA_DIR=DIR)"
	case c.dataDir != "":
		return "--data-dir DIR"
	case c.file != "":
		return "store.path in " + c.file
	}
	return "--data-dir DIR"
}

// addDataDirFlag gives a command that opens the database the --data-dir
// of 'opsbot run', so that it can reach the bot's database (or another).
func addDataDirFlag(c *cobra.Command) *cobra.Command {
	c.Flags().String("data-dir", "", "folder of the database and the sessions' folders, as 'opsbot run --data-dir' (default: store.path and bot.data_dir)")
	return c
}

// loadPlacedConfig is loadConfigFlag with --data-dir applied (the folder
// created if missing).
func loadPlacedConfig(cmd *cobra.Command) (*Config, error) {
	cfg, err := loadConfigFlag(cmd)
	if err != nil {
		return nil, err
	}
	if err := cfg.applyRunFlags(cmd, os.Getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}
