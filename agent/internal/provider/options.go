package provider

import (
	"context"
	"net/http"
	"time"

	"github.com/opsbot/opsbot/agent/internal/streamretry"
)

// Options are what a provider's New takes besides its Config, as the
// provider keeps them.
type Options struct {
	// HTTPClient makes the calls.
	HTTPClient *http.Client
	// Retries is the provider's retry policy, with the bounds and waits
	// the options set.
	Retries streamretry.Policy
	// StreamUsage asks an OpenAI-compatible server for token usage in the
	// stream (stream_options.include_usage); the Messages API always sends
	// it.
	StreamUsage bool
	// IdleTimeout is how long a call may receive nothing (no headers, no
	// stream event) before it is given up as stalled: retried once if
	// nothing of it was shown, else worded (streamretry.Stalled).
	IdleTimeout time.Duration
	// Timers starts the idle timer: the real clock unless a test moves
	// its own.
	Timers streamretry.AfterFunc
}

// Option adjusts the Options of a provider built by New.
type Option func(*Options)

// NewOptions are the defaults — a client that waits at most 3 minutes for
// response headers, 4 calls for one response, streamretry.Sleep between
// them, usage in the stream, 60s of silence before a call is stalled — for a provider whose retry policy is
// retries, then opts.
func NewOptions(retries streamretry.Policy, opts []Option) Options {
	retries.MaxAttempts, retries.Sleep = 4, streamretry.Sleep
	o := Options{HTTPClient: defaultHTTPClient(), Retries: retries, StreamUsage: true,
		IdleTimeout: streamretry.DefaultIdleTimeout, Timers: streamretry.RealTimers}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithHTTPClient makes the provider use c (a test transport, a proxy).
func WithHTTPClient(c *http.Client) Option { return func(o *Options) { o.HTTPClient = c } }

// WithSleep replaces the wait between retries; tests pass one that records
// the duration and returns at once. It must return ctx.Err() when ctx ends.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(o *Options) { o.Retries.Sleep = sleep }
}

// WithMaxAttempts bounds the calls made for one response (default 4).
func WithMaxAttempts(n int) Option {
	return func(o *Options) {
		if n > 0 {
			o.Retries.MaxAttempts = n
		}
	}
}

// WithOnRetry calls f before each retry with the wait and the error that
// caused it, for a status line such as "the API is overloaded, retrying
// in 2s".
func WithOnRetry(f func(wait time.Duration, err error)) Option {
	return func(o *Options) { o.Retries.OnRetry = f }
}

// WithIdleTimeout sets how long a call may receive nothing before it is
// given up as stalled (agent.stream_idle_timeout); 0 keeps the default,
// streamretry.DefaultIdleTimeout.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *Options) {
		if d > 0 {
			o.IdleTimeout = d
		}
	}
}

// WithIdleTimers replaces the clock of the idle timeout: tests fire the
// timer themselves instead of waiting.
func WithIdleTimers(after streamretry.AfterFunc) Option {
	return func(o *Options) { o.Timers = after }
}

// WithoutStreamUsage stops asking for token usage in the stream
// (stream_options.include_usage), for a server that rejects the field.
func WithoutStreamUsage() Option { return func(o *Options) { o.StreamUsage = false } }

// defaultHTTPClient bounds the wait for response headers; the body of a
// stream is bounded by the caller's ctx (the turn deadline) instead.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 3 * time.Minute
	return &http.Client{Transport: t}
}
