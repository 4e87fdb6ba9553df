package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

// image is what the runtime stage of deploy/Dockerfile says about how
// opsbot runs, applied to a rootfs stand-in.
type image struct {
	entrypoint, cmd []string
	health          []string // HEALTHCHECK CMD, exec form
	expose          string
	volumes         []string
	env             map[string]string
	workdir         string
	uid, gid        int
	binary          string            // where the build stage's output is copied
	configs         map[string]string // container path -> file in the repository
}

func readImage(t *testing.T) image {
	t.Helper()
	df := readDockerfile(t)
	s := df.stage(t, "")
	img := image{env: map[string]string{}, workdir: "/", configs: s.copies(t)}
	img.entrypoint = jsonArgs(t, s.one(t, "ENTRYPOINT"))
	img.cmd = jsonArgs(t, s.one(t, "CMD"))
	img.uid, img.gid = parseUser(t, s.one(t, "USER"))
	img.expose = s.one(t, "EXPOSE").Args
	img.volumes = jsonArgs(t, s.one(t, "VOLUME"))
	for _, in := range s.all("ENV") {
		k, v, _ := strings.Cut(in.Args, "=")
		img.env[k] = v
	}
	for _, in := range s.all("WORKDIR") {
		img.workdir = in.Args
	}
	hc := s.one(t, "HEALTHCHECK")
	rest := hc.Args
	for strings.HasPrefix(rest, "--") {
		_, rest, _ = strings.Cut(rest, " ")
		rest = strings.TrimSpace(rest)
	}
	form, ok := strings.CutPrefix(rest, "CMD ")
	if !ok {
		t.Fatalf("Dockerfile line %d: HEALTHCHECK must be `HEALTHCHECK [options] CMD [...]`", hc.Line)
	}
	img.health = jsonArgs(t, instruction{Cmd: "HEALTHCHECK CMD", Args: form, Line: hc.Line})
	gb := goBuildCommand(t, df, nil)
	img.binary = img.entrypoint[0]
	if src := s.copyFrom(t, "build", img.binary); src != gb.output(t) {
		t.Fatalf("the image copies %s from the build stage, but go build writes %s", src, gb.output(t))
	}
	return img
}

// install lays the image's parts out in a rootfs: the binary, the files
// given (container path -> content), the volumes (writable), everything
// else read-only. files is called with the rootfs, to map paths into it.
func (img image) install(t *testing.T, files func(r *rootfs) map[string][]byte) *rootfs {
	t.Helper()
	r := newRootfs(t, img.uid, img.gid)
	for _, v := range img.volumes {
		r.mkdir(t, v, true)
	}
	for dest, data := range files(r) {
		r.mkdir(t, parentDir(dest), false)
		if err := os.WriteFile(r.path(dest), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.mkdir(t, parentDir(img.binary), false)
	bin, err := os.ReadFile(imageBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.path(img.binary), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	r.mkdir(t, "/tmp", false)
	r.freeze(t, img.volumes...)
	return r
}

// imageFiles are the files the image copies from the repository, configs
// rewritten onto the rootfs (see rewriteConfig); listen gets the port the
// image's config listens on.
func (img image) imageFiles(t *testing.T, listen *string) func(r *rootfs) map[string][]byte {
	return func(r *rootfs) map[string][]byte {
		out := map[string][]byte{}
		for dest, src := range img.configs {
			data, err := os.ReadFile(filepath.Join(repo, src))
			if err != nil {
				t.Fatalf("the image copies %s: %v", src, err)
			}
			if strings.HasSuffix(dest, ".yaml") {
				var port string
				data, port = rewriteConfig(t, data, r, img.volumes)
				if listen != nil {
					*listen = port
				}
			}
			out[dest] = data
		}
		return out
	}
}

func parentDir(p string) string { return p[:strings.LastIndex(p, "/")] }

// argv is ENTRYPOINT + CMD with container paths mapped into the rootfs.
func (img image) argv(r *rootfs) []string {
	var out []string
	for _, a := range append(append([]string(nil), img.entrypoint...), img.cmd...) {
		if strings.HasPrefix(a, "/") {
			if _, err := os.Stat(r.path(a)); err == nil {
				a = r.path(a)
			}
		}
		out = append(out, a)
	}
	return out
}

// environ is the container's environment: Docker's default PATH, the
// image's ENV (paths mapped), the operator's variables. HOME is the
// image's; TMPDIR points at a read-only folder, so that a write there fails.
func (img image) environ(r *rootfs, extra ...string) []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + r.path("/tmp")}
	for k, v := range img.env {
		if strings.HasPrefix(v, "/") {
			v = r.path(v)
		}
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

// TestImageServesHealthz runs the binary the Dockerfile builds the way the
// image runs it — its USER, ENTRYPOINT and CMD, its config, the working
// directory and everything but /data read-only — and checks that it serves
// /healthz and /readyz, that the HEALTHCHECK command passes against it and
// fails once it is gone, and that SIGTERM ends it cleanly.
func TestImageServesHealthz(t *testing.T) {
	img := readImage(t)
	if _, ok := img.configs["/etc/opsbot/opsbot.yaml"]; !ok {
		t.Fatal("the image must carry its config at /etc/opsbot/opsbot.yaml")
	}
	if got := strings.Join(img.cmd, " "); got != "run --config /etc/opsbot/opsbot.yaml" {
		t.Fatalf("CMD is %q, want the bot on the image's config", got)
	}
	if img.expose != "8080" {
		t.Fatalf("EXPOSE %s, want 8080", img.expose)
	}
	lookPath(t, img.health[0])
	var listenPort string
	r := img.install(t, img.imageFiles(t, &listenPort))
	if listenPort != img.expose {
		t.Fatalf("the config listens on port %s, the image EXPOSEs %s", listenPort, img.expose)
	}

	p := startOpsbot(t, r, img.workdir, img.argv(r), img.environ(r, "OPSBOT_WEB_API_KEY=k-"+t.Name()))
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := p.get(t, path); code != 200 {
			t.Errorf("GET %s: %d %s, want 200", path, code, body)
		}
	}
	if out, err := img.healthcheck(p.port()); err != nil {
		t.Errorf("HEALTHCHECK %q fails against a serving opsbot: %v\n%s", img.health, err, out)
	}
	if code := p.terminate(t); code != 0 {
		t.Errorf("after SIGTERM opsbot exited with %d, want 0; it said:\n%s", code, p.log())
	}
	if _, err := img.healthcheck(p.port()); err == nil {
		t.Errorf("HEALTHCHECK passes with nothing listening: it cannot fail")
	}
	if _, err := os.Stat(r.path("/data/opsbot.db")); err != nil {
		t.Errorf("the database is not on the volume: %v", err)
	}
	if !strings.Contains(p.log(), `"connectors":["web"]`) {
		t.Errorf("without Slack or Discord tokens the image should run the web chat alone; it logged:\n%s", p.log())
	}
	if !strings.Contains(built.version(t), testVersion) {
		t.Errorf("opsbot version says %q: the Dockerfile's -ldflags did not set main.version", built.version(t))
	}
}

// TestImageTurnsSlackOnFromEnv: the image's own config, with the two Slack
// tokens in the environment (as deploy/opsbot.env.example sets them), runs
// the Slack connector: it connects to Slack (a fake on loopback, the one
// line changed in the config being slack.api_url) and the start log names
// it beside the web chat.
func TestImageTurnsSlackOnFromEnv(t *testing.T) {
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	img := readImage(t)
	files := img.imageFiles(t, nil)
	r := img.install(t, func(r *rootfs) map[string][]byte {
		out := files(r)
		out["/etc/opsbot/opsbot.yaml"] = setConfigKey(t, out["/etc/opsbot/opsbot.yaml"], "slack", "api_url", fake.URL)
		return out
	})
	p := startOpsbot(t, r, img.workdir, img.argv(r), img.environ(r, "OPSBOT_WEB_API_KEY=k-"+t.Name(),
		"SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken))
	select {
	case <-fake.Connected():
	case <-time.After(60 * time.Second): // a hang, not a pace
		t.Fatalf("opsbot never connected to Slack with the image's config and the tokens in its environment; it said:\n%s", p.log())
	}
	if !strings.Contains(p.log(), `"connectors":["web","slack"]`) {
		t.Errorf("the start log does not name Slack beside the web chat:\n%s", p.log())
	}
}

// setConfigKey sets section.key in a config file's YAML.
func setConfigKey(t *testing.T, data []byte, section, key, value string) []byte {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	sec := mapValue(&doc, section)
	if sec == nil || sec.Kind != yaml.MappingNode {
		t.Fatalf("the config has no %s section:\n%s", section, data)
	}
	sec.Content = append(sec.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImageNeedsWebAPIKey: the image listens beyond loopback, so without
// OPSBOT_WEB_API_KEY it refuses to start (exit 2) and says which variable.
func TestImageNeedsWebAPIKey(t *testing.T) {
	img := readImage(t)
	r := img.install(t, img.imageFiles(t, nil))
	argv := img.argv(r)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.path(img.workdir)
	cmd.Env = img.environ(r)
	if r.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid)}}
	}
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "OPSBOT_WEB_API_KEY") {
		t.Fatalf("without OPSBOT_WEB_API_KEY: exit %d, %q; want exit 2 naming the variable", code, out)
	}
}

// TestImageBuildSettings: the binary carries what the image relies on —
// cgo (SQLite), the embedded zone database (no tzdata in the image) and
// no build paths.
func TestImageBuildSettings(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", imageBinary(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	for _, want := range []string{"CGO_ENABLED=1", "-tags=timetzdata,sqlite_fts5", "-trimpath=true"} {
		if !strings.Contains(string(out), "build\t"+want) {
			t.Errorf("the image's binary lacks build setting %s:\n%s", want, out)
		}
	}
}

// healthcheck runs the image's HEALTHCHECK command against port (the image
// checks the port it EXPOSEs; here the process listens elsewhere).
func (img image) healthcheck(port string) ([]byte, error) {
	args := make([]string, len(img.health))
	for i, a := range img.health {
		args[i] = strings.ReplaceAll(a, "/"+img.expose, "/"+port)
	}
	return exec.Command(args[0], args[1:]...).CombinedOutput()
}

// lookPath fails the test when a tool the image relies on is missing here.
func lookPath(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is needed to run the image's HEALTHCHECK here: %v", name, err)
	}
}
