package redact

import "strings"

// secretNameParts mark an environment variable or config key whose value
// is a secret.
var secretNameParts = []string{"KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "PRIVATE", "COOKIE", "DSN", "WEBHOOK"}

// IsSecretName reports whether a variable or config key named name holds
// a secret by its name, e.g. OPENAI_API_KEY, SLACK_BOT_TOKEN, DB_PASSWORD.
func IsSecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range secretNameParts {
		if strings.Contains(upper, p) {
			return true
		}
	}
	return false
}

// EnvSecrets returns the values of the variables in environ ("NAME=value",
// as os.Environ gives) whose names say they hold a secret, to Register.
func EnvSecrets(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && IsSecretName(name) && len(value) >= MinSecretLen {
			out = append(out, value)
		}
	}
	return out
}
