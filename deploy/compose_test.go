package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCompose checks deploy/compose.yaml against the Dockerfile and the
// env example (there is no Docker here to run it): it builds the
// Dockerfile from the repository, keeps /data in a named volume, publishes
// the EXPOSEd port, and its env file, made from opsbot.env.example, sets
// every variable the image's config needs.
func TestCompose(t *testing.T) {
	dir := filepath.Join(repo, "deploy")
	data, err := os.ReadFile(filepath.Join(dir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Build struct {
				Context    string `yaml:"context"`
				Dockerfile string `yaml:"dockerfile"`
			} `yaml:"build"`
			EnvFile []struct {
				Path string `yaml:"path"`
			} `yaml:"env_file"`
			Ports    []string `yaml:"ports"`
			Volumes  []string `yaml:"volumes"`
			ReadOnly bool     `yaml:"read_only"`
			Tmpfs    []string `yaml:"tmpfs"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	svc, ok := c.Services["opsbot"]
	if !ok {
		t.Fatal("compose.yaml has no service opsbot")
	}
	ctx := filepath.Join(dir, svc.Build.Context)
	if ctx != repo {
		t.Errorf("build context %s, want the repository root (the Dockerfile copies go.mod and cmd/)", ctx)
	}
	if _, err := os.Stat(filepath.Join(ctx, svc.Build.Dockerfile)); err != nil {
		t.Errorf("build dockerfile: %v", err)
	}
	img := readImage(t)
	dataVolume := ""
	for _, v := range svc.Volumes {
		if src, dst, _ := strings.Cut(v, ":"); dst == img.volumes[0] {
			dataVolume = src
		}
	}
	if _, named := c.Volumes[dataVolume]; dataVolume == "" || !named {
		t.Errorf("volumes %v: want a named volume on %s (named volumes start owned by the image's user)", svc.Volumes, img.volumes[0])
	}
	published := false
	for _, p := range svc.Ports {
		published = published || strings.HasSuffix(p, ":"+img.expose)
	}
	if !published {
		t.Errorf("ports %v do not publish the EXPOSEd %s", svc.Ports, img.expose)
	}
	if !svc.ReadOnly || len(svc.Tmpfs) == 0 {
		t.Errorf("read_only %v, tmpfs %v: want a read-only container with a tmpfs /tmp", svc.ReadOnly, svc.Tmpfs)
	}

	if len(svc.EnvFile) != 1 {
		t.Fatalf("env_file %v: want one", svc.EnvFile)
	}
	example, err := os.ReadFile(filepath.Join(dir, svc.EnvFile[0].Path+".example"))
	if err != nil {
		t.Fatalf("the env file %s needs an example to copy: %v", svc.EnvFile[0].Path, err)
	}
	set := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_][A-Z0-9_]*)=`).FindAllStringSubmatch(string(example), -1) {
		set[m[1]] = true
	}
	for dest, src := range img.configs {
		conf, err := os.ReadFile(filepath.Join(repo, src))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range configVars(t, string(conf)) {
			if !set[name] {
				t.Errorf("the image's %s needs ${%s}; %s.example does not set it", dest, name, svc.EnvFile[0].Path)
			}
		}
		// The optional ones (${NAME:-}, a connector's token) are in the
		// example too, commented out, so that a reader finds them there.
		values := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(string(conf), "")
		for _, m := range regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*):-\}`).FindAllStringSubmatch(values, -1) {
			if !regexp.MustCompile(`(?m)^#?` + m[1] + `=`).Match(example) {
				t.Errorf("the image's %s reads ${%s:-}; %s.example does not mention it", dest, m[1], svc.EnvFile[0].Path)
			}
		}
	}
}
