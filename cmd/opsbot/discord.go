package main

import (
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/discord"
)

// newDiscord builds the Discord connector when discord.token is set (nil
// otherwise). Its token is one of the config's secrets (a key named
// token), so the process's redactor masks it wherever it could show. Its
// REST calls are counted in opsbot_platform_api_requests_total.
func (rt *parts) newDiscord() (connectors.Connector, error) {
	if !rt.cfg.Discord.Enabled() {
		return nil, nil
	}
	return discord.New(rt.cfg.Discord, discord.Options{Log: rt.log.With("connector", discord.Platform),
		Transport: rt.metrics.api.Transport(discord.Platform, connectors.RouteWithoutIDs, nil)})
}
