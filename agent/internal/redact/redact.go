package redact

import "strings"

// Placeholder replaces each occurrence of a secret.
const Placeholder = "[redacted]"

// Secret returns s with every occurrence of secret replaced by
// Placeholder; an empty secret leaves s as it is.
func Secret(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, Placeholder)
}
