package main

import (
	"fmt"

	"github.com/opsbot/opsbot/connectors/alerts"
)

// alertWarnings are the parts of a valid alerts section left idle, logged
// at start: a source with no token or secret, and a route to a platform
// that is off. They are not config check's warnings: as a connector is
// off while its token is empty (${NAME:-} in the example), so is a source.
func (c *Config) alertWarnings() []*ConfigError {
	var out []*ConfigError
	for i, s := range c.Alerts.Sources {
		if s.Open() {
			continue
		}
		key, what := fmt.Sprintf("alerts.sources[%d].token", i), "token"
		if s.Type == alerts.TypePagerDuty {
			key, what = fmt.Sprintf("alerts.sources[%d].secrets", i), "signing secret"
		}
		out = append(out, c.warning(key, fmt.Sprintf("source %q has no %s: POST /hooks/%s answers 401 to every sender until it is set", s.Name, what, s.Name)))
	}
	for i, r := range c.Alerts.Routes {
		if on, why := c.platformOn(r.PostTo.Platform); !on {
			out = append(out, c.warning(fmt.Sprintf("alerts.routes[%d].post_to.platform", i),
				fmt.Sprintf("%s is off (%s): the alerts this route takes are recorded and posted nowhere", r.PostTo.Platform, why)))
		}
	}
	return out
}

// platformOn says whether a platform's connector runs with this config.
func (c *Config) platformOn(platform string) (bool, string) {
	switch platform {
	case "slack":
		return c.Slack.Enabled(), "slack.bot_token is not set"
	case "discord":
		return c.Discord.Enabled(), "discord.token is not set"
	}
	return true, ""
}
