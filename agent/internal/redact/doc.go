// Package redact removes a secret from text that came from outside: the
// API key an LLM server echoes back in an error message, before that
// message is shown, logged or stored.
package redact
