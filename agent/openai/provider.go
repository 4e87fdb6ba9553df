package openai

import (
	"context"
	"errors"
	"iter"
	"net/url"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// DefaultModel is the model used when neither Config.Model, OPSBOT_MODEL
// nor the request names one. Other servers serve other models: a server
// that lacks it answers 404, and the error says to set agent.model.
const DefaultModel = sdk.ChatModelGPT5_5

// Config says where and as what the provider calls the API: its key
// (empty: OPENAI_API_KEY; local servers such as Ollama or vLLM usually
// need none), the server including its /v1 (empty: OPENAI_BASE_URL, then
// OpenAI's; e.g. http://localhost:11434/v1 for Ollama,
// https://api.deepseek.com/v1), the model (empty: OPSBOT_MODEL, then
// DefaultModel) and the bound of a response (0: the server's).
type Config = provider.Config

// Option adjusts a Provider built by New: WithHTTPClient, WithSleep,
// WithMaxAttempts, WithOnRetry, WithIdleTimeout, WithIdleTimers,
// WithoutStreamUsage.
type Option = provider.Option

// The options of New: the first four are every provider's.
var (
	// WithHTTPClient makes the provider use c (a test transport, a proxy).
	WithHTTPClient = provider.WithHTTPClient
	// WithSleep replaces the wait between retries; tests pass one that
	// records the duration and returns at once. It must return ctx.Err()
	// when ctx ends.
	WithSleep = provider.WithSleep
	// WithMaxAttempts bounds the calls made for one response (default 4).
	WithMaxAttempts = provider.WithMaxAttempts
	// WithIdleTimeout sets how long a call may receive nothing before it
	// is given up as stalled (default 60s): retried once if nothing of it
	// was shown, else the turn ends with words.
	WithIdleTimeout = provider.WithIdleTimeout
	// WithIdleTimers replaces the clock of the idle timeout (tests).
	WithIdleTimers = provider.WithIdleTimers
	// WithOnRetry calls f before each retry with the wait and the error
	// that caused it, for a status line such as "rate limited, retrying in
	// 7s".
	WithOnRetry = provider.WithOnRetry
	// WithoutStreamUsage stops asking for token usage in the stream
	// (stream_options.include_usage), for a server that rejects the field.
	WithoutStreamUsage = provider.WithoutStreamUsage
)

// Provider streams chat completions. It is safe for concurrent use.
type Provider struct {
	client    sdk.Client
	key       string // kept only to scrub it from server text in errors
	model     string
	maxTokens int
	official  bool // api.openai.com: the token bound is max_completion_tokens
	opts      provider.Options
}

var _ agent.Provider = (*Provider)(nil)

// environment is where an empty field of Config falls back to.
var environment = provider.Environment{KeyVar: "OPENAI_API_KEY", BaseURLVar: "OPENAI_BASE_URL", Model: DefaultModel}

// New builds a provider from cfg, falling back to OPENAI_API_KEY,
// OPENAI_BASE_URL and OPSBOT_MODEL for empty fields. It fails without a
// key when the server is OpenAI's own; other servers may need none.
func New(cfg Config, opts ...Option) (*Provider, error) {
	cfg = cfg.Filled(environment)
	official := isOfficial(cfg.BaseURL)
	if cfg.APIKey == "" && official {
		return nil, errors.New("openai: no API key: set agent.api_key or OPENAI_API_KEY (for a local server such as Ollama, set agent.base_url or OPENAI_BASE_URL instead)")
	}
	p := &Provider{key: cfg.APIKey, model: cfg.Model, maxTokens: cfg.MaxTokens, official: official,
		opts: provider.NewOptions(streamretry.Policy{Name: "openai", Retryable: retryable, Header: responseHeader}, opts)}
	// These follow the SDK's environment defaults, so they win over it.
	sdkOpts := []option.RequestOption{
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(p.opts.HTTPClient),
		// All retries are ours: see retry.go.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		sdkOpts = append(sdkOpts, option.WithBaseURL(cfg.BaseURL))
	}
	p.client = sdk.NewClient(sdkOpts...)
	return p, nil
}

// isOfficial reports whether baseURL is OpenAI's own API, which wants
// max_completion_tokens (its reasoning models refuse max_tokens) where
// other servers (DeepSeek, Ollama, older vLLM) know only max_tokens.
func isOfficial(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && u.Hostname() == "api.openai.com"
}

// Stream sends req and streams the response as events: text deltas as
// they come, each tool call once complete, then the usage and the stop
// reason, or an EventError. Each range over the sequence makes a new call;
// breaking out of it ends the call. See retry.go for when a failed call is
// made again.
func (p *Provider) Stream(ctx context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
	return provider.Stream(ctx, &p.opts, provider.Calls[sdk.ChatCompletionNewParams]{
		Params: func() (sdk.ChatCompletionNewParams, string, error) {
			params, err := p.params(req)
			return params, string(params.Model), err
		},
		Once: func(ctx context.Context, params sdk.ChatCompletionNewParams, out *streamretry.Emitter, alive func()) error {
			return p.streamOnce(ctx, params, out, alive)
		},
		Describe: p.describe,
	})
}
