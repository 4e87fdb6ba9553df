package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/store"
)

func newBackupCmd() *cobra.Command {
	c := addDataDirFlag(&cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the database to FILE, safely while the bot runs, and check the copy",
		Long: `Copy the database of --data-dir or store.path to FILE with SQLite's online backup:
a consistent snapshot taken while 'opsbot run' goes on working (it needs neither
the bot's lock nor a stop, and no sqlite3 program). The copy is checked (PRAGMA
integrity_check) before it takes FILE's name, then its size and the rows of each
table are printed. FILE is one self-contained database file: to restore it, stop
the bot and put it in place of the database.

An existing FILE is left alone (exit 2) unless --force is given.`,
		Example: "  opsbot backup /var/backups/opsbot-$(date +%F).db --data-dir /var/lib/opsbot\n" +
			"  docker compose exec opsbot opsbot backup --config /etc/opsbot/opsbot.yaml --force /data/backup.db",
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) != 1 {
				return usageError(errors.New("backup needs one FILE to write the copy to, e.g. opsbot backup /var/backups/opsbot.db"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			force, _ := cmd.Flags().GetBool("force")
			cfg, err := loadReadConfig(cmd)
			if err != nil {
				return err
			}
			return backup(cmd, cfg, a[0], force)
		},
	})
	c.Flags().Bool("force", false, "overwrite FILE if it exists")
	return c
}

// backup copies the database and prints what the copy holds.
func backup(cmd *cobra.Command, cfg *Config, dest string, force bool) error {
	if st, err := os.Stat(filepath.Dir(dest)); err != nil || !st.IsDir() {
		return usageError(fmt.Errorf("there is no folder %s for %s: create it, or name a file in another", filepath.Dir(dest), dest))
	}
	rep, err := store.Backup(cmd.Context(), cfg.Store, dest, force)
	switch {
	case errors.Is(err, store.ErrBackupExists):
		return usageError(fmt.Errorf("%s exists: name another file, or add --force to overwrite it", dest))
	case errors.Is(err, store.ErrNoDatabase):
		return usageError(fmt.Errorf("there is no database at %s: point %s at the bot's database", cfg.Store.WithDefaults().Path, cfg.storeSetting()))
	case err != nil:
		return err
	}
	printBackup(cmd.OutOrStdout(), cfg.Store.WithDefaults().Path, rep)
	return nil
}

func printBackup(w io.Writer, src string, rep store.BackupReport) {
	fmt.Fprintf(w, "%s: copied from %s, %s (%d pages), integrity ok\n", rep.Path, src, sizeText(rep.Size), rep.Pages)
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	for _, t := range rep.Rows {
		fmt.Fprintf(tw, "  %s\t%d rows\n", t.Table, t.Rows)
	}
	tw.Flush()
}

// sizeText says a file's size in bytes, KiB or MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
