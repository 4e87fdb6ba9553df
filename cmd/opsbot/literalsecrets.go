package main

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// secretShapes are the shapes of the tokens and keys opsbot is given,
// as they would appear written out in a config file.
var secretShapes = []struct {
	what  string
	shape *regexp.Regexp
}{
	{"a Slack bot token", regexp.MustCompile(`^xoxb-`)},
	{"a Slack app-level token", regexp.MustCompile(`^xapp-`)},
	{"a Slack user token", regexp.MustCompile(`^xoxp-`)},
	{"an Anthropic API key", regexp.MustCompile(`^sk-ant-`)},
	{"an OpenAI API key", regexp.MustCompile(`^sk-[A-Za-z0-9_-]{16,}`)},
	// A Discord bot token: the bot's id in base64, a timestamp, an HMAC.
	{"a Discord bot token", regexp.MustCompile(`^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{20,}$`)},
}

// literalSecretWarnings finds secrets written into the file itself (before
// ${NAME} expansion): a config file is read by more people and tools than
// the environment, and is often committed.
func literalSecretWarnings(path string, n *yaml.Node, key string) []*ConfigError {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		var out []*ConfigError
		for i, c := range n.Content {
			out = append(out, literalSecretWarnings(path, c, fmt.Sprintf("%s[%d]", key, i))...)
		}
		return out
	case yaml.MappingNode:
		var out []*ConfigError
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, literalSecretWarnings(path, n.Content[i+1], join(key, n.Content[i].Value))...)
		}
		return out
	case yaml.ScalarNode:
		for _, s := range secretShapes {
			if s.shape.MatchString(strings.TrimSpace(n.Value)) {
				return []*ConfigError{{File: path, Line: n.Line, Key: key, Msg: fmt.Sprintf(
					"warning: this looks like %s written into the file: put it in the environment and write ${NAME} here, e.g. ${%s}",
					s.what, envNameFor(key))}}
			}
		}
	}
	return nil
}

// envNameFor suggests a variable name for a key: the documented one where
// there is one.
func envNameFor(key string) string {
	known := map[string]string{"slack.bot_token": "SLACK_BOT_TOKEN", "slack.app_token": "SLACK_APP_TOKEN",
		"discord.token": "DISCORD_BOT_TOKEN", "web.api_key": "OPSBOT_WEB_API_KEY"}
	if v, ok := known[key]; ok {
		return v
	}
	return "OPSBOT_" + strings.ToUpper(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(key, "_"))
}

// minWebKey is the shortest web API key accepted on a listener other
// machines reach.
const minWebKey = 16

// placeholderKeys are keys from examples and habits, refused beyond loopback.
var placeholderKeys = regexp.MustCompile(`(?i)^(change-?me.*|changeit|secret|password|passw0rd|placeholder|example|test|admin|default|key|apikey|api-key|xxx+|\.\.\.)$`)

// webKeyErrors refuses a placeholder or short web.api_key when the web
// chat listens beyond loopback: there the key is all that stands between
// the network and the bot's hosts.
func (c *Config) webKeyErrors() []error {
	key := c.Web.APIKey
	if key == "" || loopbackListen(c.Web.Listen) {
		return nil
	}
	fix := fmt.Sprintf("web.listen %s can be reached from other machines; make a key with: openssl rand -hex 24", c.Web.Listen)
	switch {
	case placeholderKeys.MatchString(key):
		return []error{c.problem("web.api_key", fmt.Sprintf("%q is a placeholder, not a key: %s", key, fix))}
	case len(key) < minWebKey:
		return []error{c.problem("web.api_key", fmt.Sprintf("is %d characters, fewer than %d: %s", len(key), minWebKey, fix))}
	}
	return nil
}
