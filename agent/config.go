package agent

import (
	"fmt"
	"time"
)

// Config is the `agent` section of the config file.
type Config struct {
	// Provider is "anthropic" or "openai" (any OpenAI-compatible endpoint:
	// OpenAI, DeepSeek, Ollama, vLLM). Empty picks one from the environment
	// (ANTHROPIC_API_KEY, OPENAI_API_KEY / OPENAI_BASE_URL) or leaves the
	// agent off.
	Provider string `yaml:"provider"`
	// Model names the model; OPSBOT_MODEL overrides an empty value.
	Model string `yaml:"model"`
	// APIKey authenticates to the provider; use ${ENV} rather than a literal.
	APIKey string `yaml:"api_key"`
	// BaseURL points at a non-default endpoint.
	BaseURL string `yaml:"base_url"`
	// MaxSteps bounds the model calls of one turn (default 20).
	MaxSteps int `yaml:"max_steps"`
	// TurnTimeout bounds one turn (default 10m).
	TurnTimeout time.Duration `yaml:"turn_timeout"`
	// MaxTokens bounds one model response (default 4096).
	MaxTokens int `yaml:"max_tokens"`
	// CompactAt is the estimated size of a conversation, in tokens, past
	// which it is replaced by a summary (default 100000).
	CompactAt int `yaml:"compact_at"`
	// SkillDirs are folders holding one skill per subfolder (SKILL.md).
	SkillDirs []string `yaml:"skill_dirs"`
	// ContextBudget is the estimated size of one model call, in tokens,
	// past which command output the model has already read is shortened to
	// its head and tail, oldest first, in bulk (default 50000).
	ContextBudget int `yaml:"context_budget"`
	// StreamUsage asks an OpenAI-compatible server for token counts in the
	// stream (stream_options); false for a server that rejects the field.
	// Default true.
	StreamUsage *bool `yaml:"stream_usage"`
	// StreamIdleTimeout is how long a model call may send nothing — no
	// response headers, no event of its stream — before it is given up
	// (default 60s): made again once if nothing was shown yet, else the
	// turn ends saying that the model stopped sending.
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// OnJobEnd is what a background job the agent started does when it
	// ends: "turn" (default) runs a short agent turn in its thread that
	// reads the job's output and answers; "notify" only posts the news.
	OnJobEnd string `yaml:"on_job_end"`
	// Prometheus and Loki are the services the prometheus_query and
	// loki_query tools read; unset, the tool is not offered.
	Prometheus Endpoint `yaml:"prometheus"`
	Loki       Endpoint `yaml:"loki"`
	// Budget bounds the tokens a turn, a thread's day and an alert
	// investigation may spend (0: no limit).
	Budget TokenBudget `yaml:"budget"`
}

// The choices of Config.OnJobEnd.
const (
	JobEndTurn   = "turn"
	JobEndNotify = "notify"
)

// Validate checks the provider name and the bounds.
func (c Config) Validate() error {
	switch c.Provider {
	case "", "anthropic", "openai":
	default:
		return fieldError{"provider", fmt.Sprintf("%q is not a provider: use anthropic or openai", c.Provider)}
	}
	if c.Provider == "anthropic" && c.APIKey == "" {
		return fieldError{"api_key", "is required for provider anthropic: set it to ${ANTHROPIC_API_KEY}"}
	}
	if c.Provider == "" && (c.APIKey != "" || c.BaseURL != "") {
		return fieldError{"provider", "is required when api_key or base_url is set: anthropic or openai"}
	}
	if c.MaxSteps < 0 || c.MaxTokens < 0 || c.CompactAt < 0 || c.ContextBudget < 0 {
		return fieldError{"max_steps", "max_steps, max_tokens, compact_at and context_budget must be positive"}
	}
	switch c.OnJobEnd {
	case "", JobEndTurn, JobEndNotify:
	default:
		return fieldError{"on_job_end", fmt.Sprintf("%q is not a choice: use turn or notify", c.OnJobEnd)}
	}
	if c.StreamIdleTimeout < 0 {
		return fieldError{"stream_idle_timeout", "must be a positive duration, e.g. 60s"}
	}
	if c.TurnTimeout < 0 {
		return fieldError{"turn_timeout", "must be a positive duration, e.g. 10m"}
	}
	if err := c.Budget.validate(); err != nil {
		return err
	}
	if err := c.Prometheus.Validate("prometheus"); err != nil {
		return err
	}
	return c.Loki.Validate("loki")
}

// fieldError is a validation error about one key of this section.
type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// Field is the key's name within the section.
func (e fieldError) Field() string { return e.key }

// validate checks that each budget is a count of tokens.
func (b TokenBudget) validate() error {
	for _, f := range []struct {
		key string
		n   int
	}{{"budget.turn", b.Turn}, {"budget.thread_day", b.ThreadDay}, {"budget.alert", b.Alert}} {
		if f.n < 0 {
			return fieldError{f.key, "must be a number of tokens, or 0 for no limit"}
		}
	}
	return nil
}
