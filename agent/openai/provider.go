package openai

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"os"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// DefaultModel is the model used when neither Config.Model, OPSBOT_MODEL
// nor the request names one. Other servers serve other models: a server
// that lacks it answers 404, and the error says to set agent.model.
const DefaultModel = sdk.ChatModelGPT5_5

// Config says where and as what the provider calls the API. Empty fields
// fall back to the environment, then to defaults.
type Config struct {
	// APIKey authenticates the calls; empty falls back to OPENAI_API_KEY.
	// Local servers (Ollama, vLLM) usually need none.
	APIKey string
	// BaseURL picks the server, including its /v1 (e.g.
	// http://localhost:11434/v1 for Ollama, https://api.deepseek.com/v1);
	// empty falls back to OPENAI_BASE_URL, then to OpenAI's.
	BaseURL string
	// Model is used when a request names none; empty falls back to
	// OPSBOT_MODEL, then to DefaultModel.
	Model string
	// MaxTokens bounds a response when the request sets no bound; 0 leaves
	// it to the server.
	MaxTokens int
}

// Provider streams chat completions. It is safe for concurrent use.
type Provider struct {
	client      sdk.Client
	key         string // kept only to scrub it from server text in errors
	model       string
	maxTokens   int
	official    bool // api.openai.com: the token bound is max_completion_tokens
	streamUsage bool
	retries     streamretry.Policy
	httpClient  *http.Client
}

var _ agent.Provider = (*Provider)(nil)

// Option adjusts a Provider built by New.
type Option func(*Provider)

// WithHTTPClient makes the provider use c (a test transport, a proxy).
func WithHTTPClient(c *http.Client) Option { return func(p *Provider) { p.httpClient = c } }

// WithSleep replaces the wait between retries; tests pass one that records
// the duration and returns at once. It must return ctx.Err() when ctx ends.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(p *Provider) { p.retries.Sleep = sleep }
}

// WithMaxAttempts bounds the calls made for one response (default 4).
func WithMaxAttempts(n int) Option {
	return func(p *Provider) {
		if n > 0 {
			p.retries.MaxAttempts = n
		}
	}
}

// WithOnRetry calls f before each retry with the wait and the error that
// caused it, for a status line such as "rate limited, retrying in 7s".
func WithOnRetry(f func(wait time.Duration, err error)) Option {
	return func(p *Provider) { p.retries.OnRetry = f }
}

// WithoutStreamUsage stops asking for token usage in the stream
// (stream_options.include_usage), for a server that rejects the field.
func WithoutStreamUsage() Option { return func(p *Provider) { p.streamUsage = false } }

// New builds a provider from cfg, falling back to OPENAI_API_KEY,
// OPENAI_BASE_URL and OPSBOT_MODEL for empty fields. It fails without a
// key when the server is OpenAI's own; other servers may need none.
func New(cfg Config, opts ...Option) (*Provider, error) {
	cfg = withEnvironment(cfg)
	official := isOfficial(cfg.BaseURL)
	if cfg.APIKey == "" && official {
		return nil, errors.New("openai: no API key: set agent.api_key or OPENAI_API_KEY (for a local server such as Ollama, set agent.base_url or OPENAI_BASE_URL instead)")
	}
	p := &Provider{
		key: cfg.APIKey, model: cfg.Model, maxTokens: cfg.MaxTokens, official: official,
		streamUsage: true, httpClient: defaultHTTPClient(),
		retries: streamretry.Policy{
			Name: "openai", MaxAttempts: 4, Retryable: retryable, Header: responseHeader, Sleep: sleepContext,
		},
	}
	for _, o := range opts {
		o(p)
	}
	// These follow the SDK's environment defaults, so they win over it.
	sdkOpts := []option.RequestOption{
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(p.httpClient),
		// All retries are ours: see retry.go.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		sdkOpts = append(sdkOpts, option.WithBaseURL(cfg.BaseURL))
	}
	p.client = sdk.NewClient(sdkOpts...)
	return p, nil
}

// withEnvironment fills empty fields of cfg from the environment.
func withEnvironment(cfg Config) Config {
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if cfg.Model == "" {
		cfg.Model = os.Getenv("OPSBOT_MODEL")
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	return cfg
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

// defaultHTTPClient bounds the wait for response headers; the body of a
// stream is bounded by the caller's ctx (the turn deadline) instead.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 3 * time.Minute
	return &http.Client{Transport: t}
}

// Stream sends req and streams the response as events: text deltas as
// they come, each tool call once complete, then the usage and the stop
// reason, or an EventError. Each range over the sequence makes a new call;
// breaking out of it ends the call. See retry.go for when a failed call is
// made again.
func (p *Provider) Stream(ctx context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
	return func(yield func(agent.StreamEvent) bool) {
		params, err := p.params(req)
		if err != nil {
			yield(agent.StreamEvent{Kind: agent.EventError, Err: err})
			return
		}
		out := streamretry.NewEmitter(yield)
		model := string(params.Model)
		p.retries.Run(ctx, out, func() error { return p.streamOnce(ctx, params, out) },
			func(err error, attempts int, shown bool) error { return p.describe(ctx, err, model, attempts, shown) })
	}
}

// sleepContext is the wait between retries unless WithSleep replaces it.
var sleepContext = streamretry.Sleep
