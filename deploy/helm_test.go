package deploy_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

var chartDir = filepath.Join(repo, "deploy", "helm", "opsbot")

// The two Slack tokens of the smallest install.
var slackTokens = []string{"--set", "slack.botToken=xoxb-test-bot-token", "--set", "slack.appToken=xapp-test-app-token"}

// helmBinary is $OPSBOT_HELM (make test-deploy sets it), or the pinned helm
// the Makefile builds once per machine: helm-VERSION in
// ${XDG_CACHE_HOME:-$HOME/.cache}/opsbot, VERSION the Makefile's HELM_VERSION.
func helmBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OPSBOT_HELM"); p != "" {
		return p
	}
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^HELM_VERSION\s*:?=\s*(\S+)`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no HELM_VERSION")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	bin := filepath.Join(cache, "opsbot", "helm-"+string(m[1]))
	if _, err := os.Stat(bin); err != nil {
		if testing.Short() {
			t.Skipf("needs helm %s, which make test-deploy builds (go test -short skips this)", m[1])
		}
		t.Fatalf("helm %s is not built: run `make test-deploy` (it builds helm once per machine into %s), or set OPSBOT_HELM to a helm binary", m[1], filepath.Dir(bin))
	}
	return bin
}

func helm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// No user helm config, cache or plugins: the same result everywhere.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		return out, errors.New(err.Error() + ": " + stderr.String())
	}
	return out, nil
}

// manifest is one rendered Kubernetes object.
type manifest = map[string]any

func kindOf(m manifest) string { return str(m["kind"]) }

// render runs helm template and splits the output into objects.
func render(t *testing.T, args ...string) []manifest {
	t.Helper()
	out, err := helm(t, append([]string{"template", "opsbot", chartDir, "--namespace", "ops"}, args...)...)
	if err != nil {
		t.Fatalf("helm template %s: %v", strings.Join(args, " "), err)
	}
	var docs []manifest
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("helm template output is not YAML: %v\n%s", err, out)
		}
		if m != nil {
			docs = append(docs, m)
		}
	}
	return docs
}

func only(t *testing.T, docs []manifest, kind string) manifest {
	t.Helper()
	var found []manifest
	for _, d := range docs {
		if kindOf(d) == kind {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s, rendered %d", kind, len(found))
	}
	return found[0]
}

func count(docs []manifest, kind string) int {
	n := 0
	for _, d := range docs {
		if kindOf(d) == kind {
			n++
		}
	}
	return n
}

// get follows a path of map keys and list indexes through a manifest.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string { s, _ := v.(string); return s }

func list(v any) []any { l, _ := v.([]any); return l }

// TestHelmLint: the chart passes helm lint --strict, as installed with
// only the Slack tokens and with every option on.
func TestHelmLint(t *testing.T) {
	for _, args := range [][]string{
		slackTokens,
		append(slices(slackTokens), "--set", "serviceMonitor.enabled=true", "--set", "persistence.existingClaim=mine",
			"--set", "discord.botToken=test-discord-token"),
		{"--set", "existingSecret=opsbot-tokens"},
		{"--set", "existingSecret=opsbot-tokens", "--set", "slack.connector=true", "--set", "discord.connector=true"},
	} {
		if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
			t.Errorf("helm lint %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func slices(s []string) []string { return append([]string(nil), s...) }

// TestHelmDeployment renders the chart with only the two Slack tokens and
// checks the Deployment: one replica, Recreate, probes on /healthz and
// /readyz at the container's port, /data on the chart's claim, non-root
// with a read-only root file system, resources, and the env the config
// refers to coming from the Secret.
func TestHelmDeployment(t *testing.T) {
	docs := render(t, slackTokens...)
	dep := only(t, docs, "Deployment")
	if r, _ := get(dep, "spec", "replicas").(int); r != 1 {
		t.Errorf("replicas %v, want 1: Slack gives each Socket Mode event to one connection, SQLite has one writer", get(dep, "spec", "replicas"))
	}
	if s := str(get(dep, "spec", "strategy", "type")); s != "Recreate" {
		t.Errorf("strategy %q, want Recreate (never two pods at once)", s)
	}
	pod := get(dep, "spec", "template", "spec")
	containers := list(get(pod, "containers"))
	if len(containers) != 1 {
		t.Fatalf("want one container, got %d", len(containers))
	}
	c := containers[0]
	if got := str(get(c, "ports", 0, "name")); got != "http" || get(c, "ports", 0, "containerPort") != 8080 {
		t.Errorf("container port %v, want http on 8080 (the image's EXPOSE)", get(c, "ports"))
	}
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz", "startupProbe": "/healthz"} {
		if got := str(get(c, probe, "httpGet", "path")); got != path {
			t.Errorf("%s path %q, want %s", probe, got, path)
		}
		if got := get(c, probe, "httpGet", "port"); got != "http" {
			t.Errorf("%s port %v, want the container's http port", probe, got)
		}
	}
	if v := get(pod, "securityContext", "runAsNonRoot"); v != true {
		t.Errorf("pod runAsNonRoot %v, want true", v)
	}
	if v := get(c, "securityContext", "readOnlyRootFilesystem"); v != true {
		t.Errorf("readOnlyRootFilesystem %v, want true", v)
	}
	if v := get(c, "securityContext", "allowPrivilegeEscalation"); v != false {
		t.Errorf("allowPrivilegeEscalation %v, want false", v)
	}
	if get(c, "resources", "requests") == nil || get(c, "resources", "limits") == nil {
		t.Errorf("resources %v: want requests and limits", get(c, "resources"))
	}
	img := readImage(t)
	if uid := get(pod, "securityContext", "runAsUser"); uid != img.uid {
		t.Errorf("runAsUser %v, the image's USER is %d", uid, img.uid)
	}
	if got := strings.Join(strs(get(c, "args")), " "); got != strings.Join(img.cmd, " ") {
		t.Errorf("args %q, want the image's CMD %q", got, img.cmd)
	}

	mounts := map[string]string{} // mount path -> volume
	for _, m := range list(get(c, "volumeMounts")) {
		mounts[str(get(m, "mountPath"))] = str(get(m, "name"))
	}
	volumes := map[string]any{}
	for _, v := range list(get(pod, "volumes")) {
		volumes[str(get(v, "name"))] = v
	}
	pvc := only(t, docs, "PersistentVolumeClaim")
	if claim := str(get(volumes[mounts["/data"]], "persistentVolumeClaim", "claimName")); claim == "" || claim != str(get(pvc, "metadata", "name")) {
		t.Errorf("/data is mounted from %v, want the chart's claim %v", volumes[mounts["/data"]], get(pvc, "metadata", "name"))
	}
	if get(volumes[mounts["/tmp"]], "emptyDir") == nil {
		t.Errorf("/tmp is %v, want an emptyDir (the root file system is read-only)", volumes[mounts["/tmp"]])
	}
	cm := only(t, docs, "ConfigMap")
	if name := str(get(volumes[mounts["/etc/opsbot"]], "configMap", "name")); name != str(get(cm, "metadata", "name")) {
		t.Errorf("/etc/opsbot is mounted from %v, want the ConfigMap", volumes[mounts["/etc/opsbot"]])
	}

	// Every ${VAR} the config needs comes from the chart's Secret.
	secret := only(t, docs, "Secret")
	env := podEnv(t, c, secret)
	for _, name := range configVars(t, str(get(cm, "data", "opsbot.yaml"))) {
		if _, ok := env[name]; !ok {
			t.Errorf("the config refers to ${%s}, which the pod does not set", name)
		}
	}
	if env["SLACK_BOT_TOKEN"] != "xoxb-test-bot-token" || env["SLACK_APP_TOKEN"] != "xapp-test-app-token" {
		t.Errorf("the Slack tokens do not reach the pod's env from the Secret: %v", env)
	}
}

// TestHelmNoSecretInConfigMap: token values live in the Secret only; the
// ConfigMap (and every other object) holds ${ENV} references.
func TestHelmNoSecretInConfigMap(t *testing.T) {
	docs := render(t, append(slices(slackTokens), "--set", "agent.anthropicApiKey=sk-ant-test-key", "--set", "web.apiKey=web-test-key")...)
	secret := only(t, docs, "Secret")
	var values []string
	for k, v := range get(secret, "data").(map[string]any) {
		raw, err := base64.StdEncoding.DecodeString(str(v))
		if err != nil {
			t.Fatalf("Secret key %s: %v", k, err)
		}
		values = append(values, string(raw))
	}
	if len(values) != 4 {
		t.Fatalf("the Secret holds %d values, want the web key, two Slack tokens and the model key", len(values))
	}
	for _, d := range docs {
		if kindOf(d) == "Secret" {
			continue
		}
		text, _ := yaml.Marshal(d)
		for _, v := range values {
			if strings.Contains(string(text), v) {
				t.Errorf("the %s holds the secret value %q", kindOf(d), v)
			}
		}
	}
}

// TestHelmConfigRuns is the "working Deployment" check: the ConfigMap's
// opsbot.yaml and the Secret's values, with the pod's env, run the image's
// binary, which then answers each probe of the Deployment with 200.
func TestHelmConfigRuns(t *testing.T) {
	// Slack's Web API and Socket Mode are a fake on loopback: with the two
	// tokens the connector is on, and /readyz waits for its connection.
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	docs := render(t, "--set", "slack.botToken="+slackfake.BotToken, "--set", "slack.appToken="+slackfake.AppToken,
		"--set", "config.slack.api_url="+fake.URL)
	dep, cm, secret := only(t, docs, "Deployment"), only(t, docs, "ConfigMap"), only(t, docs, "Secret")
	c := get(dep, "spec", "template", "spec", "containers", 0)
	env := podEnv(t, c, secret)

	// Where the pod sees the ConfigMap's opsbot.yaml.
	configPath := ""
	for _, m := range list(get(c, "volumeMounts")) {
		if str(get(m, "name")) == "config" {
			configPath = str(get(m, "mountPath")) + "/opsbot.yaml"
		}
	}
	img := readImage(t)
	var port string
	r := img.install(t, func(r *rootfs) map[string][]byte {
		var conf []byte
		conf, port = rewriteConfig(t, []byte(str(get(cm, "data", "opsbot.yaml"))), r, img.volumes)
		return map[string][]byte{configPath: conf}
	})
	if port != "8080" {
		t.Fatalf("the chart's config listens on port %s, the container port is 8080", port)
	}
	var extra []string
	for k, v := range env {
		extra = append(extra, k+"="+v)
	}
	argv := append([]string{r.path(img.binary)}, strs(get(c, "args"))...)
	for i, a := range argv {
		if a == configPath {
			argv[i] = r.path(a)
		}
	}
	p := startOpsbot(t, r, "/", argv, img.environ(r, extra...))
	select {
	case <-fake.Connected():
	case <-time.After(60 * time.Second): // a hang, not a pace
		t.Fatal("opsbot never connected to the fake Slack with the chart's config")
	}
	// An envelope acknowledged: the connector has read what came before
	// it on the connection, its being connected included.
	select {
	case <-fake.Acked(fake.Reply("C0OPS", "U0ALICE", "", "not for the bot").Envelopes[0]):
	case <-time.After(60 * time.Second):
		t.Fatal("opsbot never acknowledged an envelope")
	}
	for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
		path := str(get(c, probe, "httpGet", "path"))
		if code, body := p.get(t, path); code != 200 {
			t.Errorf("%s GET %s: %d %s, want 200", probe, path, code, body)
		}
	}
}

// TestHelmExistingSecret: with existingSecret the chart makes no Secret
// and the env refers to the user's Secret and key names.
func TestHelmExistingSecret(t *testing.T) {
	docs := render(t, "--set", "existingSecret=opsbot-tokens", "--set", "secretKeys.webApiKey=WEB_KEY")
	if n := count(docs, "Secret"); n != 0 {
		t.Errorf("rendered %d Secrets, want none with existingSecret", n)
	}
	c := get(only(t, docs, "Deployment"), "spec", "template", "spec", "containers", 0)
	for _, e := range list(get(c, "env")) {
		ref := get(e, "valueFrom", "secretKeyRef")
		if ref == nil {
			continue
		}
		if str(get(ref, "name")) != "opsbot-tokens" {
			t.Errorf("env %s refers to Secret %v, want opsbot-tokens", get(e, "name"), get(ref, "name"))
		}
		if str(get(e, "name")) == "OPSBOT_WEB_API_KEY" && (str(get(ref, "key")) != "WEB_KEY" || get(ref, "optional") == true) {
			t.Errorf("OPSBOT_WEB_API_KEY comes from %v, want the required key WEB_KEY", ref)
		}
	}
}

// TestHelmServiceMonitor: the optional ServiceMonitor scrapes /metrics on
// the Service's port, selecting the Service by its labels.
func TestHelmServiceMonitor(t *testing.T) {
	if n := count(render(t, slackTokens...), "ServiceMonitor"); n != 0 {
		t.Errorf("ServiceMonitor rendered by default (%d): it needs the Prometheus Operator's CRD", n)
	}
	docs := render(t, append(slices(slackTokens), "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=prometheus")...)
	sm, svc := only(t, docs, "ServiceMonitor"), only(t, docs, "Service")
	if got := str(get(sm, "spec", "endpoints", 0, "path")); got != "/metrics" {
		t.Errorf("ServiceMonitor path %q, want /metrics", got)
	}
	if got, want := str(get(sm, "spec", "endpoints", 0, "port")), str(get(svc, "spec", "ports", 0, "name")); got != want {
		t.Errorf("ServiceMonitor port %q, the Service's port is named %q", got, want)
	}
	sel := get(sm, "spec", "selector", "matchLabels").(map[string]any)
	for k, v := range sel {
		if get(svc, "metadata", "labels", k) != v {
			t.Errorf("ServiceMonitor selects %s=%v, the Service has %v", k, v, get(svc, "metadata", "labels", k))
		}
	}
	if get(sm, "metadata", "labels", "release") != "prometheus" {
		t.Errorf("serviceMonitor.labels not applied: %v", get(sm, "metadata", "labels"))
	}
}

// TestHelmSlackConnector: the two Slack tokens alone turn the connector
// on — the slack section with ${ENV} references, the tokens required;
// slack.connector without tokens (and without existingSecret) refuses to
// render, saying what to set; without either, no slack section.
func TestHelmSlackConnector(t *testing.T) {
	docs := render(t, slackTokens...)
	var conf struct {
		Slack map[string]string `yaml:"slack"`
	}
	if err := yaml.Unmarshal([]byte(str(get(only(t, docs, "ConfigMap"), "data", "opsbot.yaml"))), &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Slack["bot_token"] != "${SLACK_BOT_TOKEN}" || conf.Slack["app_token"] != "${SLACK_APP_TOKEN}" {
		t.Errorf("slack section %v, want the tokens as ${SLACK_BOT_TOKEN} and ${SLACK_APP_TOKEN}", conf.Slack)
	}
	c := get(only(t, docs, "Deployment"), "spec", "template", "spec", "containers", 0)
	for _, e := range list(get(c, "env")) {
		if strings.HasPrefix(str(get(e, "name")), "SLACK_") && get(e, "valueFrom", "secretKeyRef", "optional") != false {
			t.Errorf("%s is optional with the connector on", get(e, "name"))
		}
	}
	_, err := helm(t, "template", "opsbot", chartDir, "--set", "slack.connector=true")
	if err == nil || !strings.Contains(err.Error(), "slack.botToken") {
		t.Errorf("slack.connector without tokens rendered (%v), want an error naming slack.botToken", err)
	}
	off := render(t)
	if strings.Contains(str(get(only(t, off, "ConfigMap"), "data", "opsbot.yaml")), "slack") {
		t.Errorf("without tokens the config has a slack section:\n%s", get(only(t, off, "ConfigMap"), "data", "opsbot.yaml"))
	}
}

// podEnv resolves the container's env: literal values, and secretKeyRefs
// into the rendered Secret (a missing optional key leaves the variable
// unset, as the kubelet does; a missing required one fails).
func podEnv(t *testing.T, c any, secret manifest) map[string]string {
	t.Helper()
	env := map[string]string{}
	data, _ := get(secret, "data").(map[string]any)
	for _, e := range list(get(c, "env")) {
		name := str(get(e, "name"))
		if v, ok := get(e, "value").(string); ok {
			env[name] = v
			continue
		}
		ref := get(e, "valueFrom", "secretKeyRef")
		if str(get(ref, "name")) != str(get(secret, "metadata", "name")) {
			t.Fatalf("env %s refers to Secret %v, not the chart's", name, get(ref, "name"))
		}
		b64, ok := data[str(get(ref, "key"))]
		if !ok {
			if get(ref, "optional") != true {
				t.Fatalf("env %s needs key %v, which the Secret lacks: the pod would not start", name, get(ref, "key"))
			}
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(str(b64))
		if err != nil {
			t.Fatal(err)
		}
		env[name] = string(raw)
	}
	return env
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// configVars are the variables a config needs (${NAME} without a default).
func configVars(t *testing.T, conf string) []string {
	t.Helper()
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(conf, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatal("the config refers to no ${VAR}: where does the web API key come from?")
	}
	return out
}

func strs(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, str(x))
	}
	return out
}

// TestHelmRefusesReplicaCount: asking for more pods (the usual
// replicaCount value) is refused by the chart's schema, naming the value,
// instead of being silently ignored; so is a misspelt value.
func TestHelmRefusesReplicaCount(t *testing.T) {
	for _, set := range []string{"replicaCount=2", "slack.botTokn=xoxb-x"} {
		_, err := helm(t, "template", "opsbot", chartDir, "--set", set)
		name, _, _ := strings.Cut(set, "=")
		name = name[strings.LastIndex(name, ".")+1:]
		if err == nil || !strings.Contains(err.Error(), "'"+name+"' not allowed") {
			t.Errorf("helm template --set %s: %v; want it refused, naming %s", set, err, name)
		}
	}
}

// TestHelmDiscordConnector: discord.botToken turns the connector on — the
// discord section reads ${DISCORD_BOT_TOKEN}, which the pod gets from the
// Secret, required; discord.connector without the token (and without
// existingSecret) refuses to render, saying what to set; without either,
// no discord section and the variable optional.
func TestHelmDiscordConnector(t *testing.T) {
	const token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.test-discord-token"
	docs := render(t, "--set", "discord.botToken="+token)
	var conf struct {
		Slack   map[string]string `yaml:"slack"`
		Discord map[string]string `yaml:"discord"`
	}
	if err := yaml.Unmarshal([]byte(str(get(only(t, docs, "ConfigMap"), "data", "opsbot.yaml"))), &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Discord["token"] != "${DISCORD_BOT_TOKEN}" || conf.Slack != nil {
		t.Errorf("discord section %v, slack %v; want token: ${DISCORD_BOT_TOKEN} and no slack section", conf.Discord, conf.Slack)
	}
	dep, secret := only(t, docs, "Deployment"), only(t, docs, "Secret")
	c := get(dep, "spec", "template", "spec", "containers", 0)
	if env := podEnv(t, c, secret); env["DISCORD_BOT_TOKEN"] != token {
		t.Errorf("DISCORD_BOT_TOKEN in the pod is %q, want the token from the Secret", env["DISCORD_BOT_TOKEN"])
	}
	if optional := discordEnvOptional(t, c); optional {
		t.Error("DISCORD_BOT_TOKEN is optional with the connector on")
	}
	_, err := helm(t, "template", "opsbot", chartDir, "--set", "discord.connector=true")
	if err == nil || !strings.Contains(err.Error(), "discord.botToken") {
		t.Errorf("discord.connector without a token rendered (%v), want an error naming discord.botToken", err)
	}
	off := render(t)
	if strings.Contains(str(get(only(t, off, "ConfigMap"), "data", "opsbot.yaml")), "discord") {
		t.Errorf("without a token the config has a discord section:\n%s", get(only(t, off, "ConfigMap"), "data", "opsbot.yaml"))
	}
	if !discordEnvOptional(t, get(only(t, off, "Deployment"), "spec", "template", "spec", "containers", 0)) {
		t.Error("DISCORD_BOT_TOKEN is required with the connector off: the pod would not start without it")
	}
}

// discordEnvOptional reports whether the container's DISCORD_BOT_TOKEN
// comes from an optional Secret key.
func discordEnvOptional(t *testing.T, c any) bool {
	t.Helper()
	for _, e := range list(get(c, "env")) {
		if str(get(e, "name")) == "DISCORD_BOT_TOKEN" {
			return get(e, "valueFrom", "secretKeyRef", "optional") == true
		}
	}
	t.Fatal("the container has no DISCORD_BOT_TOKEN")
	return false
}
