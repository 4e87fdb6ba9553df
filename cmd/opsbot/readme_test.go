package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's YAML examples (change the port, add an approver, add a
// host) are valid as written, once the key files they name exist, and
// leave nobody unable to approve.
func TestReadmeConfigExamplesPassConfigCheck(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(blocks) < 3 {
		t.Fatalf("the README has %d YAML examples, want the port, an approver and a host", len(blocks))
	}
	dir := t.TempDir()
	key, _, known := sshFiles(t, dir, "")
	files := strings.NewReplacer("/etc/opsbot/known_hosts", known, "/etc/opsbot/id_ed25519", key)
	for i, b := range blocks {
		path := filepath.Join(dir, "readme.yaml")
		yaml := files.Replace(b[1])
		write(t, path, yaml)
		cfg, err := loadConfig(path)
		if err != nil {
			t.Errorf("README example %d does not pass config check:\n%s\n%v", i+1, b[1], err)
			continue
		}
		if w := cfg.approvalWarnings(); len(w) > 0 {
			t.Errorf("README example %d draws warnings: %v", i+1, w)
		}
	}
}
