package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/approvals/redact"
)

// Error is a failed chat completions call, worded for the person who must
// act on it. It does not wrap the SDK's error, whose text repeats the raw
// response body (OpenAI echoes part of a refused key), and it never holds
// the API key: server text is scrubbed of it.
type Error struct {
	// StatusCode is the HTTP status; 200 for an error inside a stream.
	StatusCode int
	// Type and Code are the server's error type and code, e.g.
	// "invalid_request_error" and "context_length_exceeded"; either may be
	// empty, as compatible servers fill them unevenly.
	Type, Code string
	// Message says what went wrong and what to do.
	Message string
}

// Error returns the message with the package's prefix.
func (e *Error) Error() string { return "openai: " + e.Message }

// HTTPStatus is the status the API answered with, for a retry's status
// line ("rate limited by the model API").
func (e *Error) HTTPStatus() int { return e.StatusCode }

// serverError is an error the server reported, from an HTTP status and
// body or from an error chunk in the stream, whichever server sent it.
type serverError struct {
	status         int
	typ, code, msg string
	header         http.Header
}

// is reports whether the type or code mentions word.
func (s serverError) is(word string) bool {
	return strings.Contains(strings.ToLower(s.typ), word) || strings.Contains(strings.ToLower(s.code), word)
}

// overloaded reports whether the server says it is overloaded.
func overloaded(s serverError) bool {
	return s.is("overloaded") || s.status == 529 || s.status == http.StatusServiceUnavailable
}

// httpError is a non-2xx response captured by the middleware of a call:
// compatible servers word error bodies in ways the SDK cannot always parse
// (a bare string, an HTML page from a proxy), so the status and body are
// kept here rather than read back from the SDK's error.
type httpError struct {
	status int
	header http.Header
	body   []byte
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d", e.status) }

// captureErrors is a middleware recording a failed response in *into.
func captureErrors(into **httpError) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode < 300 {
			return res, err
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		*into = &httpError{status: res.StatusCode, header: res.Header, body: body}
		return res, nil
	}
}

// asServerError extracts what the server said, if err is its report.
func asServerError(err error) (serverError, bool) {
	var he *httpError
	if errors.As(err, &he) {
		se := parseErrorBody(he.body)
		se.status, se.header = he.status, he.header
		return se, true
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		s := parseErrorBody(se.Event.Data)
		s.status = http.StatusOK
		return s, true
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		s := serverError{status: apiErr.StatusCode, typ: apiErr.Type, code: apiErr.Code, msg: apiErr.Message}
		if apiErr.Response != nil {
			s.header = apiErr.Response.Header
		}
		return s, true
	}
	return serverError{}, false
}

// parseErrorBody reads {"error":{"message","type","code"}}, the OpenAI
// shape, or {"error":"text"} (Ollama, some proxies); anything else leaves
// the message empty.
func parseErrorBody(body []byte) serverError {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Error) == 0 {
		return serverError{}
	}
	var text string
	if json.Unmarshal(env.Error, &text) == nil {
		return serverError{msg: text}
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	_ = json.Unmarshal(env.Error, &obj)
	s := serverError{msg: obj.Message, typ: obj.Type}
	if obj.Code != nil {
		s.code = fmt.Sprint(obj.Code)
	}
	return s
}

// describe turns the error of a failed call into what the caller sees.
func (p *Provider) describe(ctx context.Context, err error, model string, attempts int, shown bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %w", ctx.Err())
	}
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	if se, ok := asServerError(err); ok {
		e := p.serverError(se, model, attempts)
		if shown {
			e.Message = "the response was cut off: " + e.Message
		}
		return e
	}
	return streamretry.DescribeUnreported("openai", err, attempts, shown)
}

// serverError words an error the server reported by its status, type and
// code, which OpenAI-compatible servers fill unevenly.
func (p *Provider) serverError(s serverError, model string, attempts int) *Error {
	said := ""
	if m := redact.New(p.key).String(s.msg); m != "" {
		said = " (the server said: " + m + ")"
	}
	label := strings.TrimSpace(fmt.Sprintf("%d %s", s.status, cmp(s.code, s.typ)))
	if s.status == http.StatusOK { // an error chunk inside the stream
		label = cmp(cmp(s.code, s.typ), "error chunk")
	}
	var msg string
	switch {
	case s.status == http.StatusUnauthorized || s.code == "invalid_api_key":
		// No server text: OpenAI echoes part of the refused key.
		msg = fmt.Sprintf("the API key was refused (%s): set agent.api_key or OPENAI_API_KEY to a valid key", label)
	case s.status == http.StatusForbidden:
		msg = fmt.Sprintf("the API key may not do this (%s)%s: check the key's project and agent.model", label, said)
	case s.status == http.StatusNotFound || s.code == "model_not_found":
		msg = fmt.Sprintf("model %q or the endpoint was not found (%s)%s: set agent.model (or OPSBOT_MODEL) to a model this server serves, and check agent.base_url (it usually ends in /v1)", model, label, said)
	case s.status == http.StatusRequestEntityTooLarge || s.code == "context_length_exceeded" || tooLong(s.msg):
		msg = fmt.Sprintf("the conversation is too long for the model (%s)%s: start a new conversation or compact this one", label, said)
	case s.code == "insufficient_quota" || s.typ == "insufficient_quota":
		msg = fmt.Sprintf("the account is out of quota (%s)%s: check its plan and billing", label, said)
	case s.status == http.StatusTooManyRequests || s.is("rate_limit"):
		if wait, ok := streamretry.ServerWait(s.header); ok && wait > streamretry.MaxWait {
			said += fmt.Sprintf(" (it asks to wait %s)", wait)
		}
		msg = fmt.Sprintf("rate limited by the server (%s%s)%s: wait and try again, or raise the account's rate limits", label, streamretry.Attempts(attempts), said)
	case overloaded(s):
		msg = fmt.Sprintf("the server is overloaded (%s%s)%s: try again in a few minutes", label, streamretry.Attempts(attempts), said)
	case s.status == http.StatusBadRequest || s.status == http.StatusUnprocessableEntity:
		msg = fmt.Sprintf("the server rejected the request (%s)%s", label, said)
	case s.status >= 500 || s.is("server_error"):
		msg = fmt.Sprintf("the server failed (%s%s)%s: try again later", label, streamretry.Attempts(attempts), said)
	default:
		msg = fmt.Sprintf("the call failed (%s)%s", label, said)
	}
	return &Error{StatusCode: s.status, Type: s.typ, Code: s.code, Message: msg}
}

// tooLong recognises the wordings of a prompt over the context window.
func tooLong(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "context length", "context window", "too many tokens", "prompt is too long"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// cmp returns a, or b when a is empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
