package main

import (
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/opsbot/opsbot/approvals/redact"
)

// redactor is the process's one redactor, built on first use (before the
// environment is scrubbed) with every secret value opsbot holds: the
// secret-named keys of the config and the secret-named variables of the
// environment. Every boundary gets this one: the logger, the chat, the
// history, command output, the audit trail.
func (c *Config) redactor() *redact.Redactor {
	if c.red == nil {
		c.red = redact.New(c.secrets()...)
	}
	return c.red
}

// secrets are the secret values opsbot holds: the values of the config's
// secret-named keys (web.api_key, agent.api_key, …) and of the
// environment's secret-named variables (OPENAI_API_KEY, …).
func (c *Config) secrets() []string {
	out := secretFields(reflect.ValueOf(c).Elem())
	out = append(out, c.MCP.Secrets()...) // header values: a map's strings are not keys secretFields knows
	return append(out, redact.EnvSecrets(os.Environ())...)
}

// secretFields walks a config section for string values under
// secret-named keys. A key naming a file, a path or a hash of a secret is
// not the secret itself.
func secretFields(v reflect.Value) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, secretFields(v.Elem())...)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" {
				name = f.Name
			}
			if fv := v.Field(i); fv.Kind() == reflect.String && isSecretKey(name) {
				if fv.String() != "" { // a secret not set (slack.app_token in http mode)
					out = append(out, fv.String())
				}
			} else {
				out = append(out, secretFields(fv)...)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			out = append(out, secretFields(v.Index(i))...)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			out = append(out, secretFields(it.Value())...)
		}
	}
	return out
}

// isSecretKey reports whether a config key holds a secret value.
func isSecretKey(name string) bool {
	lower := strings.ToLower(name)
	for _, notSecret := range []string{"file", "files", "path", "dir", "sha256", "env"} {
		if strings.HasSuffix(lower, "_"+notSecret) || lower == notSecret {
			return false
		}
	}
	return redact.IsSecretName(name)
}

// scrubEnv removes opsbot's secrets from its own environment once they are
// read: every secret-named variable and every variable holding a value of
// secrets (a config's ${VAR} under a secret key). Nothing started later
// inherits them, and /proc/PID/environ no longer shows them.
func scrubEnv(secrets []string) {
	var names []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if redact.IsSecretName(name) || (len(value) >= redact.MinSecretLen && slices.Contains(secrets, value)) {
			names = append(names, name)
		}
	}
	for _, n := range names {
		os.Unsetenv(n)
	}
	blankProcEnviron(names)
}
