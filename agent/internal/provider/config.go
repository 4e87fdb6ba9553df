package provider

import "os"

// Config says where and as what a provider calls its API. Empty fields
// fall back to the environment, then to defaults.
type Config struct {
	// APIKey authenticates the calls; empty falls back to the provider's
	// variable (ANTHROPIC_API_KEY, OPENAI_API_KEY). Local OpenAI-compatible
	// servers (Ollama, vLLM) usually need none.
	APIKey string
	// BaseURL points at a non-default endpoint (a proxy, a fake, another
	// server: for OpenAI-compatible ones including its /v1, e.g.
	// http://localhost:11434/v1 for Ollama); empty falls back to the
	// provider's variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), then to
	// the vendor's own URL.
	BaseURL string
	// Model is used when a request names none; empty falls back to
	// OPSBOT_MODEL, then to the provider's DefaultModel.
	Model string
	// MaxTokens bounds a response when the request sets no bound; 0 is
	// the provider's default (anthropic.DefaultMaxTokens; for openai, the
	// server's).
	MaxTokens int
}

// Environment names where a provider's Config falls back to.
type Environment struct {
	// KeyVar and BaseURLVar are the variables of APIKey and BaseURL.
	KeyVar, BaseURLVar string
	// Model is the model when neither Config nor OPSBOT_MODEL names one.
	Model string
}

// Filled is c with its empty fields taken from the environment, then
// from the default model.
func (c Config) Filled(env Environment) Config {
	if c.APIKey == "" {
		c.APIKey = os.Getenv(env.KeyVar)
	}
	if c.BaseURL == "" {
		c.BaseURL = os.Getenv(env.BaseURLVar)
	}
	if c.Model == "" {
		c.Model = os.Getenv("OPSBOT_MODEL")
	}
	if c.Model == "" {
		c.Model = env.Model
	}
	return c
}
