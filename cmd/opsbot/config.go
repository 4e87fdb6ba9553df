package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/mcp"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/connectors/discord"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
	"github.com/opsbot/opsbot/store/leader"
)

// Config is the whole config file: each package owns its section.
type Config struct {
	Log       logConfig            `yaml:"log"`
	Store     store.Config         `yaml:"store"`
	Web       web.Config           `yaml:"web"`
	Slack     slack.Config         `yaml:"slack"`
	Hosts     hosts.Config         `yaml:",inline"`
	Policy    policy.PolicyConfig  `yaml:"policy"`
	Approvals approvals.GateConfig `yaml:"approvals"`
	Agent     agent.Config         `yaml:"agent"`
	Bot       bot.Config           `yaml:"bot"`
	// Checks are the `checks` and `schedules` sections.
	Checks checks.Config `yaml:",inline"`
	// Discord is the `discord` section: the connector is on when its token
	// is set.
	Discord discord.Config `yaml:"discord"`
	// Alerts is the `alerts` section: webhook sources, routes and the
	// investigations' limits.
	Alerts alerts.Config `yaml:"alerts"`
	// MCP is the `mcp` section: the MCP tool servers (agent/mcp).
	MCP mcp.Config `yaml:"mcp"`
	// HA is the `ha` section: two replicas, one leader (store/leader).
	HA leader.Settings `yaml:"ha"`

	// file is where the config came from ("" for the embedded default).
	file string
	// dataDir is --data-dir, when given (see storeSetting).
	dataDir string
	// storeFound is set when no setting named the database and the one
	// `make run` keeps was found (see findDefaultStore).
	storeFound bool
	// lines maps dotted key paths to their line in the file.
	lines map[string]int
	// red is the process's one redactor (see redactor).
	red *redact.Redactor
	// env is the connectors' token variables as the environment ${NAME}
	// was expanded from held them (nil: none), for the warning about a
	// token set for a connector that stays off: a snapshot, as the run
	// scrubs the tokens from the environment before it logs the warnings.
	env func(string) (string, bool)
	// literalSecrets are the warnings about secrets written into the file.
	literalSecrets []*ConfigError
}

// logConfig is the `log` section.
type logConfig struct {
	// Level is debug, info, warn or error (default info).
	Level string `yaml:"level"`
	// Format is text, json or auto (default auto: text on a terminal,
	// JSON otherwise).
	Format string `yaml:"format"`
}

func (c logConfig) Validate() error {
	var errs []error
	if _, err := parseLevel(c.Level); err != nil {
		errs = append(errs, fieldErr{"level", err.Error()})
	}
	switch c.Format {
	case "", "auto", "text", "json":
	default:
		errs = append(errs, fieldErr{"format", fmt.Sprintf("%q is not a log format: use auto, text or json", c.Format)})
	}
	return errors.Join(errs...)
}

// fieldErr is a validation error about one key of a section.
type fieldErr struct{ key, msg string }

func (e fieldErr) Error() string { return e.key + ": " + e.msg }
func (e fieldErr) Field() string { return e.key }

// fielder is what a section's validation error offers to point at its key.
type fielder interface{ Field() string }

// ConfigError is a config problem located in its file.
type ConfigError struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *ConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// loadConfigFlag loads the file named by --config, or the embedded default
// when the flag is empty.
func loadConfigFlag(cmd *cobra.Command) (*Config, error) {
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		return defaultConfig(), nil
	}
	var placed []string // keys a flag replaces: the file's values need not exist
	if dir, _ := cmd.Flags().GetString("data-dir"); dir != "" {
		placed = []string{"store.path", "bot.data_dir"}
	}
	cfg, err := loadConfig(path, placed...)
	if err != nil {
		return nil, usageError(err)
	}
	return cfg, nil
}

// defaultConfig is the embedded default of design §4: web chat on
// 127.0.0.1:8080, ./opsbot.db, the built-in host local, the default policy.
func defaultConfig() *Config {
	c := &Config{env: tokenSnapshot(os.LookupEnv)}
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	c.Store = c.Store.WithDefaults()
	c.Web = c.Web.WithDefaults()
}

// loadConfig reads, expands, decodes and validates a config file, then
// checks the files it names. Every problem found is reported, each with
// file, line and key, in the order of the file.
func loadConfig(path string, placed ...string) (*Config, error) {
	return loadConfigKeeping(path, nil, placed...)
}

// loadConfigKeeping is loadConfig reporting only the problems of keys
// keep accepts (nil: all) and those of the file as a whole; the other
// sections are decoded as well as they can be.
func loadConfigKeeping(path string, keep func(key string) bool, placed ...string) (*Config, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &ConfigError{File: path, Msg: "no such file: check the path given to --config (deploy/opsbot.example.yaml is a file to start from)"}
	case err != nil:
		return nil, &ConfigError{File: path, Msg: unreadable(path, err).Error()}
	}
	cfg, errs := decodeConfig(path, data, os.LookupEnv)
	if cfg != nil {
		errs = appendUnshadowed(errs, withoutKeys(flatten(cfg.checkFiles()), placed))
	}
	if keep != nil && cfg != nil {
		errs = keptKeys(errs, keep)
	}
	if len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	return cfg, nil
}

// keptKeys keeps the problems of the keys keep accepts and those of no
// key (the file as a whole).
func keptKeys(errs []error, keep func(key string) bool) []error {
	var out []error
	for _, err := range errs {
		var ce *ConfigError
		if errors.As(err, &ce) && ce.Key != "" && !keep(ce.Key) {
			continue
		}
		out = append(out, err)
	}
	return out
}

// withoutKeys drops the problems of keys a flag replaces.
func withoutKeys(errs []error, keys []string) []error {
	var out []error
	for _, err := range errs {
		var ce *ConfigError
		if errors.As(err, &ce) && slices.Contains(keys, ce.Key) {
			continue
		}
		out = append(out, err)
	}
	return out
}

// parseConfig is loadConfig without the file system: lookup resolves
// ${ENV}, and the files the config names are not checked.
func parseConfig(path string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	cfg, errs := decodeConfig(path, data, lookup)
	if len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	return cfg, nil
}

// decodeConfig finds every problem of a config file it can. The config is
// nil when the YAML cannot be read at all; otherwise it holds what could
// be decoded, with defaults applied, so that later checks can go on.
func decodeConfig(path string, data []byte, lookup func(string) (string, bool)) (*Config, []error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && err.Error() != "EOF" {
		return nil, afterSyntaxErrors(path, data, syntaxErrors(path, data, err), lookup)
	}
	cfg := &Config{file: path, lines: map[string]int{}, env: tokenSnapshot(lookup)}
	if doc.Kind == 0 { // empty file: all defaults
		cfg.applyDefaults()
		return cfg, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, []error{&ConfigError{File: path, Line: root.Line,
			Msg: "expected sections of keys (log:, store:, web:, hosts: ...), each on a line of its own; see deploy/opsbot.example.yaml"}}
	}
	var errs []error
	errs = append(errs, checkKeys(path, root, reflect.TypeOf(Config{}), "", cfg.lines)...)
	cfg.literalSecrets = literalSecretWarnings(path, root, "")
	errs = append(errs, expandEnv(path, root, "", lookup)...)
	if err := root.Decode(cfg); err != nil {
		for _, e := range flatten(yamlError(path, err)) {
			errs = append(errs, cfg.nameKey(e))
		}
	}
	cfg.applyDefaults()
	// Validation runs on what could be decoded: a problem the decoder
	// found does not hide the others, and one it found is not reported
	// twice (a value it could not read is left empty).
	errs = appendUnshadowed(errs, flatten(cfg.validate()))
	return cfg, errs
}

// afterSyntaxErrors goes on past the lines the YAML parser refused: with
// them blanked (so the other lines keep their numbers), the rest of the
// file is checked too, so that a tab or a mis-indent does not hide a bad
// value elsewhere. The file stays refused either way.
func afterSyntaxErrors(path string, data []byte, errs []error, lookup func(string) (string, bool)) []error {
	lines := strings.Split(string(data), "\n")
	blanked := false
	for _, e := range errs {
		var ce *ConfigError
		if errors.As(e, &ce) && ce.Line >= 1 && ce.Line <= len(lines) && strings.TrimSpace(lines[ce.Line-1]) != "" {
			lines[ce.Line-1], blanked = "", true
		}
	}
	if !blanked {
		return errs // nothing left to blank: this is all that can be said
	}
	_, more := decodeConfig(path, []byte(strings.Join(lines, "\n")), lookup)
	seen := map[string]bool{}
	for _, e := range errs {
		seen[e.Error()] = true
	}
	for _, e := range more {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			errs = append(errs, e)
		}
	}
	return errs
}

// appendUnshadowed appends the errors of more whose key is not already
// in error in errs, nor below such a key.
func appendUnshadowed(errs, more []error) []error {
	var bad []string
	for _, e := range errs {
		var ce *ConfigError
		if errors.As(e, &ce) && ce.Key != "" {
			bad = append(bad, ce.Key)
		}
	}
	for _, e := range more {
		var ce *ConfigError
		shadowed := false
		if errors.As(e, &ce) {
			for _, k := range bad {
				shadowed = shadowed || ce.Key == k || strings.HasPrefix(ce.Key, k+".") || strings.HasPrefix(ce.Key, k+"[")
			}
		}
		if !shadowed {
			errs = append(errs, e)
		}
	}
	return errs
}

// joinSorted joins errors in the order of their lines in the file (those
// without a line last).
func joinSorted(errs []error) error {
	line := func(e error) int {
		var ce *ConfigError
		if errors.As(e, &ce) && ce.Line > 0 {
			return ce.Line
		}
		return 1 << 30
	}
	sort.SliceStable(errs, func(i, j int) bool { return line(errs[i]) < line(errs[j]) })
	return errors.Join(errs...)
}

// validate runs each section's own validation and locates its errors.
func (c *Config) validate() error {
	sections := []struct {
		prefix string
		v      any
	}{
		{"log.", c.Log}, {"store.", c.Store}, {"web.", c.Web}, {"slack.", c.Slack}, {"", c.Hosts},
		{"policy.", c.Policy}, {"approvals.", c.Approvals}, {"agent.", c.Agent}, {"bot.", c.Bot},
		{"", c.Checks},
		{"discord.", c.Discord},
		{"alerts.", c.Alerts},
		{"mcp.", c.MCP},
		{"ha.", c.HA},
	}
	var errs []error
	for _, s := range sections {
		if v, ok := s.v.(interface{ Validate() error }); ok {
			for _, err := range flatten(v.Validate()) {
				errs = append(errs, c.locate(s.prefix, err))
			}
		}
	}
	errs = append(errs, c.approverIDErrors()...)
	errs = append(errs, c.webKeyErrors()...)
	if len(errs) == 0 {
		errs = append(errs, c.validateChecks()...)
	}
	return errors.Join(errs...)
}

// validateChecks refuses a check whose command the policy does not allow
// without approval on one of its target hosts: a scheduled run never
// waits for a click. It runs once the sections are valid, as it needs the
// inventory and the policy built from them.
func (c *Config) validateChecks() []error {
	if len(c.Checks.Checks) == 0 {
		return nil
	}
	inv, err := hosts.NewInventory(c.Hosts)
	if err != nil {
		return nil // reported by the hosts section
	}
	pol, err := policy.NewPolicy(c.Policy)
	if err != nil {
		return nil // reported by the policy section
	}
	var errs []error
	for _, e := range flatten(c.Checks.ValidateFleet(inv, checks.PolicyOf(pol))) {
		errs = append(errs, c.locate("", e))
	}
	return errs
}

// locate turns a section's error into a ConfigError with the key's line,
// or the nearest enclosing key's line when the key itself is absent.
func (c *Config) locate(prefix string, err error) error {
	var f fielder
	if !errors.As(err, &f) {
		return &ConfigError{File: c.file, Key: strings.TrimSuffix(prefix, "."), Msg: err.Error()}
	}
	key := prefix + f.Field()
	msg := strings.TrimPrefix(err.Error(), f.Field()+": ")
	line := 0
	for k := key; k != "" && line == 0; k = parentKey(k) {
		line = c.lines[k]
	}
	return &ConfigError{File: c.file, Line: line, Key: key, Msg: msg}
}

// nameKey fills in the key of a decoder error from its line.
func (c *Config) nameKey(err error) error {
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "" || ce.Line == 0 {
		return err
	}
	for k, line := range c.lines {
		if line == ce.Line && len(k) > len(ce.Key) {
			ce.Key = k
		}
	}
	return ce
}

func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// flatten splits an errors.Join into its parts.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// checkKeys walks the YAML tree against the Go types and reports every key
// the types do not have, recording each known key's line on the way.
func checkKeys(path string, n *yaml.Node, t reflect.Type, prefix string, lines map[string]int) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.AliasNode:
		return checkKeys(path, n.Alias, t, prefix, lines)
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		var errs []error
		for i, item := range n.Content {
			key := fmt.Sprintf("%s[%d]", prefix, i)
			lines[key] = item.Line
			errs = append(errs, checkKeys(path, item, t.Elem(), key, lines)...)
		}
		return errs
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := join(prefix, n.Content[i].Value)
			lines[key] = n.Content[i].Line
			errs = append(errs, checkKeys(path, n.Content[i+1], t.Elem(), key, lines)...)
		}
		return errs
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		return checkStructKeys(path, n, t, prefix, lines)
	}
	return nil // scalars and shape mismatches: the decoder reports type errors
}

func checkStructKeys(path string, n *yaml.Node, t reflect.Type, prefix string, lines map[string]int) []error {
	fields := yamlFields(t)
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := join(prefix, k.Value)
		ft, ok := fields[k.Value]
		if !ok {
			errs = append(errs, &ConfigError{File: path, Line: k.Line, Key: key,
				Msg: "unknown key" + suggest(k.Value, fields) + "; the keys here are: " + strings.Join(sortedKeys(fields), ", ")})
			continue
		}
		lines[key] = k.Line
		errs = append(errs, checkKeys(path, v, ft, key, lines)...)
	}
	return errs
}

// yamlFields maps the YAML key names of a struct (inline structs merged)
// to their types; unexported fields and `yaml:"-"` are skipped.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggest offers the closest known key when one is near enough to be a typo.
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	for k := range fields {
		if d := editDistance(key, k); d < bestD || (d == bestD && k < best && best != "") {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of two short keys.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${NAME} (and ${NAME:-default}) in scalar values, in
// the parsed tree so that a value can never inject YAML structure. An unset
// variable without a default is an error: a secret that silently became ""
// would fail later and far from its cause. `$${` escapes a literal `${`.
func expandEnv(path string, n *yaml.Node, key string, lookup func(string) (string, bool)) []error {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		var errs []error
		for i, c := range n.Content {
			errs = append(errs, expandEnv(path, c, fmt.Sprintf("%s[%d]", key, i), lookup)...)
		}
		return errs
	case yaml.MappingNode:
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, expandEnv(path, n.Content[i+1], join(key, n.Content[i].Value), lookup)...)
		}
		return errs
	case yaml.ScalarNode:
		return expandScalar(path, n, key, lookup)
	}
	return nil
}

func expandScalar(path string, n *yaml.Node, key string, lookup func(string) (string, bool)) []error {
	if !strings.Contains(n.Value, "${") {
		return nil
	}
	var errs []error
	const escaped = "\x00dollar-brace\x00"
	v := strings.ReplaceAll(n.Value, "$${", escaped)
	v = envRef.ReplaceAllStringFunc(v, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if val, ok := lookup(m[1]); ok && val != "" {
			return val
		}
		if m[2] != "" {
			return m[3]
		}
		errs = append(errs, &ConfigError{File: path, Line: n.Line, Key: key,
			Msg: fmt.Sprintf("environment variable %s is not set: export it, or write ${%s:-default}", m[1], m[1])})
		return ""
	})
	n.Value = strings.ReplaceAll(v, escaped, "${")
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return errs
	}
	// An unquoted ${PORT} may expand to a number; let the decoder
	// resolve its type again.
	n.Tag = ""
	return errs
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError turns a yaml.v3 error into ConfigErrors with file and line.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs []error
		for _, msg := range te.Errors {
			errs = append(errs, lineError(path, msg))
		}
		return errors.Join(errs...)
	}
	return lineError(path, strings.TrimPrefix(err.Error(), "yaml: "))
}

func lineError(path, msg string) error {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ConfigError{File: path, Line: line, Msg: plainYAML(m[2])}
	}
	return &ConfigError{File: path, Msg: plainYAML(msg)}
}

// allKeys lists the dotted key paths of a config type, lists shown as
// their first item ("hosts[0].name"); maps are leaves.
func allKeys(v any) []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			walk(t.Elem(), prefix+"[0]")
			return
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeOf(time.Time{}) {
			return
		}
		for _, k := range sortedKeys(yamlFields(t)) {
			key := join(prefix, k)
			out = append(out, key)
			walk(yamlFields(t)[k], key)
		}
	}
	walk(reflect.TypeOf(v), "")
	return out
}

// botConfig is the bot section with what the bot takes from other
// sections: a chat `run` without --timeout gets exec.timeout, as `hosts
// exec` does.
func (c *Config) botConfig() bot.Config {
	b := c.Bot
	b.RunTimeout = c.Hosts.Exec.WithDefaults().Timeout
	return b
}
