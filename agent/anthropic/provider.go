package anthropic

import (
	"context"
	"errors"
	"iter"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/provider"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// DefaultModel is the model used when neither Config.Model, OPSBOT_MODEL
// nor the request names one.
const DefaultModel = sdk.ModelClaudeSonnet5_5

// DefaultMaxTokens bounds a response when neither the request nor
// Config.MaxTokens does; the Messages API requires a bound.
const DefaultMaxTokens = 8192

// Config says where and as what the provider calls the API: its key
// (empty: ANTHROPIC_API_KEY), its URL (empty: ANTHROPIC_BASE_URL, then
// the SDK's production URL), the model (empty: OPSBOT_MODEL, then
// DefaultModel) and the bound of a response (0: DefaultMaxTokens).
type Config = provider.Config

// Option adjusts a Provider built by New: WithHTTPClient, WithSleep,
// WithMaxAttempts, WithOnRetry, WithIdleTimeout, WithIdleTimers.
type Option = provider.Option

// The options of New, the same for every provider.
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
	// that caused it, for a status line such as "the API is overloaded,
	// retrying in 2s".
	WithOnRetry = provider.WithOnRetry
)

// Provider streams Messages API responses. It is safe for concurrent use.
type Provider struct {
	client    sdk.Client
	key       string // kept only to scrub it from server text in errors
	model     string
	maxTokens int
	opts      provider.Options
}

var _ agent.Provider = (*Provider)(nil)

// environment is where an empty field of Config falls back to.
var environment = provider.Environment{KeyVar: "ANTHROPIC_API_KEY", BaseURLVar: "ANTHROPIC_BASE_URL", Model: DefaultModel}

// New builds a provider from cfg, falling back to ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL and OPSBOT_MODEL for empty fields. It fails when no
// API key is found.
func New(cfg Config, opts ...Option) (*Provider, error) {
	cfg = cfg.Filled(environment)
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic: no API key: set agent.api_key or ANTHROPIC_API_KEY")
	}
	p := &Provider{key: cfg.APIKey, model: cfg.Model, maxTokens: cfg.MaxTokens,
		opts: provider.NewOptions(streamretry.Policy{Name: "anthropic", Retryable: retryable, Header: responseHeader}, opts)}
	sdkOpts := []option.RequestOption{
		// The environment was read above, once, by rules we document; the
		// SDK's own chain (auth tokens, profiles on disk) would surprise.
		option.WithoutEnvironmentDefaults(),
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

// Stream sends req and streams the response as events: text deltas as
// they come, each tool call once complete, then the usage and the stop
// reason, or an EventError. Each range over the sequence makes a new call;
// breaking out of it ends the call. See retry.go for when a failed call is
// made again.
func (p *Provider) Stream(ctx context.Context, req agent.Request) iter.Seq[agent.StreamEvent] {
	return provider.Stream(ctx, &p.opts, provider.Calls[sdk.MessageNewParams]{
		Params: func() (sdk.MessageNewParams, string, error) {
			params, err := p.params(req)
			return params, string(params.Model), err
		},
		Once: func(ctx context.Context, params sdk.MessageNewParams, out *streamretry.Emitter, alive func()) error {
			return p.streamOnce(ctx, params, out, alive)
		},
		Describe: p.describe,
	})
}
