package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command's --help shows at least one example, as an SRE used to
// other tools' help looks for: the test walks the whole tree, so a new
// command without one fails here.
func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if strings.TrimSpace(sub.Example) == "" {
				t.Errorf("%s has no Example", sub.CommandPath())
			} else if !strings.Contains(sub.Example, "opsbot ") {
				t.Errorf("%s: its Example shows no opsbot command: %q", sub.CommandPath(), sub.Example)
			}
			walk(sub)
		}
	}
	walk(newRootCmd())
}
