package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployDocHelmInstall runs DEPLOY.md's Helm commands as far as can be
// done without a registry or a cluster: the image `docker build` tags is
// the one `docker push` sends, and `helm install`'s own arguments, given
// to helm template, render a Deployment that runs exactly that image (not
// the unpublished default) with Slack on.
func TestDeployDocHelmInstall(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repo, "docs", "DEPLOY.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		if strings.Contains(m[1], "helm install") {
			block = m[1]
		}
	}
	// The shell's part: continuation lines, the two command substitutions,
	// and the tokens the reader fills in.
	text := strings.NewReplacer("\\\n", " ", "$(git describe --tags --always)", "v9.9.9-test",
		"$(git rev-parse --short HEAD)", "abc1234", "xoxb-…", "xoxb-test-bot-token", "xapp-…", "xapp-test-app-token").Replace(block)
	var built, pushed string
	var install []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 3 && f[0] == "docker" && f[1] == "build":
			built = flagValue(f, "-t")
		case len(f) == 3 && f[0] == "docker" && f[1] == "push":
			pushed = f[2]
		case len(f) > 3 && f[0] == "helm" && f[1] == "install":
			install = f[2:]
		}
	}
	if built == "" || built != pushed || install == nil {
		t.Fatalf("DEPLOY.md's Helm block must build, push and install one image: built %q, pushed %q, install %q\n%s", built, pushed, install, block)
	}
	if install[1] != "deploy/helm/opsbot" {
		t.Fatalf("helm install %s: want the chart deploy/helm/opsbot", install[1])
	}
	install[1] = chartDir
	out, err := helm(t, append([]string{"template"}, install...)...)
	if err != nil {
		t.Fatalf("helm template with helm install's arguments %q: %v", install, err)
	}
	if !strings.Contains(string(out), "image: \""+pushed+"\"") {
		t.Errorf("the Deployment does not run the image pushed (%s):\n%s", pushed, out)
	}
	if !strings.Contains(string(out), "bot_token: ${SLACK_BOT_TOKEN}") {
		t.Errorf("the documented install does not turn Slack on:\n%s", out)
	}
}

// flagValue is the word after flag in f ("" if none).
func flagValue(f []string, flag string) string {
	for i, w := range f {
		if w == flag && i+1 < len(f) {
			return f[i+1]
		}
	}
	return ""
}
