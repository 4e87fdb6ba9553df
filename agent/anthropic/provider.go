package anthropic

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"os"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// DefaultModel is the model used when neither Config.Model, OPSBOT_MODEL
// nor the request names one.
const DefaultModel = sdk.ModelClaudeSonnet5_5

// DefaultMaxTokens bounds a response when neither the request nor
// Config.MaxTokens does; the Messages API requires a bound.
const DefaultMaxTokens = 8192

// Config says where and as what the provider calls the API. Empty fields
// fall back to the environment, then to defaults.
type Config struct {
	// APIKey authenticates the calls; empty falls back to ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL points at a non-default endpoint (a proxy, a fake); empty
	// falls back to ANTHROPIC_BASE_URL, then to the SDK's production URL.
	BaseURL string
	// Model is used when a request names none; empty falls back to
	// OPSBOT_MODEL, then to DefaultModel.
	Model string
	// MaxTokens is used when a request sets none; 0 means DefaultMaxTokens.
	MaxTokens int
}

// Provider streams Messages API responses. It is safe for concurrent use.
type Provider struct {
	client     sdk.Client
	key        string // kept only to scrub it from server text in errors
	model      string
	maxTokens  int
	retries    streamretry.Policy
	httpClient *http.Client
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
// caused it, for a status line such as "the API is overloaded, retrying in 2s".
func WithOnRetry(f func(wait time.Duration, err error)) Option {
	return func(p *Provider) { p.retries.OnRetry = f }
}

// New builds a provider from cfg, falling back to ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL and OPSBOT_MODEL for empty fields. It fails when no
// API key is found.
func New(cfg Config, opts ...Option) (*Provider, error) {
	cfg = withEnvironment(cfg)
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic: no API key: set agent.api_key or ANTHROPIC_API_KEY")
	}
	p := &Provider{
		key:       cfg.APIKey,
		model:     cfg.Model,
		maxTokens: cfg.MaxTokens,
		retries: streamretry.Policy{
			Name: "anthropic", MaxAttempts: 4, Retryable: retryable, Header: responseHeader, Sleep: sleepContext,
		},
		httpClient: defaultHTTPClient(),
	}
	for _, o := range opts {
		o(p)
	}
	sdkOpts := []option.RequestOption{
		// The environment was read above, once, by rules we document; the
		// SDK's own chain (auth tokens, profiles on disk) would surprise.
		option.WithoutEnvironmentDefaults(),
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

// withEnvironment fills empty fields of cfg from the environment and the
// defaults.
func withEnvironment(cfg Config) Config {
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("ANTHROPIC_API_KEY")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if cfg.Model == "" {
		cfg.Model = os.Getenv("OPSBOT_MODEL")
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	return cfg
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
