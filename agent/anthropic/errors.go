package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/approvals/redact"
)

// Error is a failed Messages API call, worded for the person who must act
// on it. It does not wrap the SDK's error, whose text repeats the raw
// response body (a server may echo the key back), and it never holds the
// API key: server text is scrubbed of it.
type Error struct {
	// StatusCode is the HTTP status; 200 for an error event inside a stream.
	StatusCode int
	// Type is the API's error type, e.g. "overloaded_error"; empty when
	// the server sent none.
	Type string
	// Message says what went wrong and what to do.
	Message string
}

// Error returns the message with the package's prefix.
func (e *Error) Error() string { return "anthropic: " + e.Message }

// HTTPStatus is the status the API answered with, for a retry's status
// line ("rate limited by the model API").
func (e *Error) HTTPStatus() int { return e.StatusCode }

// describe turns the error of a failed call into what the caller sees.
func (p *Provider) describe(ctx context.Context, err error, model string, attempts int, shown bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: %w", ctx.Err())
	}
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		e := p.apiError(apiErr, model, attempts)
		if shown {
			e.Message = "the response was cut off: " + e.Message
		}
		return e
	}
	return streamretry.DescribeUnreported("anthropic", err, attempts, shown)
}

// apiError words an error response of the API by its type and status.
func (p *Provider) apiError(e *sdk.Error, model string, attempts int) *Error {
	status, typ := e.StatusCode, string(e.Type())
	said := ""
	if m := redact.New(p.key).String(e.Message); m != "" {
		said = " (the API said: " + m + ")"
	}
	label := strings.TrimSpace(fmt.Sprintf("%d %s", status, typ))
	if status == http.StatusOK { // an error event inside the stream
		label = typ
	}
	var msg string
	switch {
	case typ == "authentication_error" || status == http.StatusUnauthorized:
		msg = fmt.Sprintf("the API key was refused (%s): set agent.api_key or ANTHROPIC_API_KEY to a valid key", label)
	case typ == "permission_error" || status == http.StatusForbidden:
		msg = fmt.Sprintf("the API key may not do this (%s)%s: check the key's workspace and agent.model", label, said)
	case typ == "not_found_error" || status == http.StatusNotFound:
		msg = fmt.Sprintf("model %q or the endpoint was not found (%s)%s: set agent.model (or OPSBOT_MODEL) to a model this API serves, and check agent.base_url", model, label, said)
	case typ == "request_too_large" || status == http.StatusRequestEntityTooLarge || tooLong(e.Message):
		msg = fmt.Sprintf("the conversation is too long for the model (%s)%s: start a new conversation or compact this one", label, said)
	case typ == "rate_limit_error" || status == http.StatusTooManyRequests:
		if wait, ok := streamretry.ServerWait(responseHeader(e)); ok && wait > streamretry.MaxWait {
			said += fmt.Sprintf(" (it asks to wait %s)", wait)
		}
		msg = fmt.Sprintf("rate limited by the API (%s%s)%s: wait and try again, or raise the account's rate limits", label, streamretry.Attempts(attempts), said)
	case typ == "overloaded_error" || status == 529:
		msg = fmt.Sprintf("the API is overloaded (%s%s): try again in a few minutes", label, streamretry.Attempts(attempts))
	case typ == "billing_error" || status == http.StatusPaymentRequired:
		msg = fmt.Sprintf("the account cannot be billed (%s)%s: check its plan and credits", label, said)
	case typ == "invalid_request_error" || status == http.StatusBadRequest:
		msg = fmt.Sprintf("the API rejected the request (%s)%s", label, said)
	case typ == "api_error" || status >= 500:
		msg = fmt.Sprintf("the API failed (%s%s)%s: try again later", label, streamretry.Attempts(attempts), said)
	default:
		msg = fmt.Sprintf("the API call failed (%s)%s", label, said)
	}
	return &Error{StatusCode: status, Type: typ, Message: msg}
}

// tooLong recognises the API's wording for a prompt over the context window.
func tooLong(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"prompt is too long", "context window", "context length", "too many tokens"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
