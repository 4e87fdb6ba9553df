package slack

import (
	"errors"
	"strings"

	"github.com/slack-go/slack"
)

// fatalCodes are Slack's answers that no retry will change: the token is
// wrong, revoked, or its app's link to the workspace is gone.
var fatalCodes = map[string]string{
	"invalid_auth":     "bot token",
	"not_authed":       "bot token",
	"token_revoked":    "bot token",
	"token_expired":    "bot token",
	"account_inactive": "bot token",
	"link_disabled":    "app-level token",
}

// errorCode is Slack's error code in err ("invalid_auth"), or err's text
// when it carries none; never a token.
func errorCode(err error) string {
	if err == nil {
		return ""
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.code
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return err.Error()
}

// fatalAuth reports whether err is one of fatalCodes.
func fatalAuth(err error) bool {
	_, ok := fatalCodes[strings.TrimSpace(errorCode(err))]
	return ok
}

// socketMethod is the call Socket Mode makes with the app-level token.
const socketMethod = "apps.connections.open"

// appTokenRefused marks a refusal met over Socket Mode: it is about the
// app-level token, whatever the code (invalid_auth means a wrong xapp-).
func appTokenRefused(err error) error {
	return &apiError{method: socketMethod, code: strings.TrimSpace(errorCode(err))}
}

// whichToken names the token a fatal code is about: the app-level token
// for Socket Mode's call, else the code's token (the bot token's for the
// Web API).
func whichToken(err error) string {
	var ae *apiError
	if errors.As(err, &ae) && ae.method == socketMethod {
		return "app-level token"
	}
	if t := fatalCodes[errorCode(err)]; t != "" {
		return t
	}
	return "token"
}

// hasCode reports whether err is Slack's answer code.
func hasCode(err error, code string) bool {
	return err != nil && errorCode(err) == code
}
