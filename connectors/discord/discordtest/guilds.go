package discordtest

import (
	"slices"
	"time"
)

// intentGuilds is the Guilds intent: GUILD_CREATE, GUILD_DELETE and the
// GUILD_ROLE_* events (and channel events the fake does not send) come
// only to a session that asked for it.
const intentGuilds = 1 << 0

// botPermissions is the permission integer of the bot's managed role (the
// one docs/DISCORD.md's invite URL asks for).
const botPermissions = "309237730304"

// guild is a server the bot is in, with its roles.
type guild struct {
	id     string
	joined time.Time
	roles  []role
}

// role is a guild's role. A bot invited with permissions gets a managed
// role of its own name, which Discord tags with the bot's id
// (tags.bot_id): people can mention it as they mention any role.
type role struct {
	id, name string
	managed  bool
	botID    string // set on a bot's managed role
}

// guildLocked is guild id, made on first use: the bot joined it with its
// managed role, and it has its @everyone role (whose id is the guild's).
func (f *Fake) guildLocked(id string) *guild {
	if g, ok := f.guilds[id]; ok {
		return g
	}
	g := &guild{id: id, joined: time.Now(), roles: []role{{id: id, name: "@everyone"}}}
	g.roles = append(g.roles, f.botRoleLocked())
	f.guilds[id] = g
	f.gw.guildEventLocked("GUILD_CREATE", f.guildJSONLocked(g)) // the bot joined it
	return g
}

func (f *Fake) botRoleLocked() role {
	return role{id: f.id(), name: "opsbot", managed: true, botID: f.BotID}
}

// BotRole is the id of the bot's managed role in guild: what a person
// who picks the role named "opsbot" in Discord's mention list mentions.
func (f *Fake) BotRole(guild string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.guildLocked(guild).roles {
		if r.botID == f.BotID {
			return r.id
		}
	}
	return ""
}

// AddRole makes a role in guild (an @oncall that pings many people, which
// the bot may hold too) and returns its id; a connected session gets
// GUILD_ROLE_CREATE.
func (f *Fake) AddRole(guild, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	g := f.guildLocked(guild)
	r := role{id: f.id(), name: name}
	g.roles = append(g.roles, r)
	f.gw.guildEventLocked("GUILD_ROLE_CREATE", map[string]any{"guild_id": g.id, "role": roleJSON(r)})
	return r.id
}

// Reinvite has the bot removed from guild and invited again, as a person
// who kicks it and opens the invite URL does: Discord deletes its managed
// role (GUILD_DELETE for the bot), then makes a new one (GUILD_CREATE).
// It returns the new role's id.
func (f *Fake) Reinvite(guild string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	g := f.guildLocked(guild)
	g.roles = slices.DeleteFunc(g.roles, func(r role) bool { return r.botID == f.BotID })
	f.gw.guildEventLocked("GUILD_DELETE", map[string]any{"id": g.id})
	r := f.botRoleLocked()
	g.roles = append(g.roles, r)
	g.joined = time.Now()
	f.gw.guildEventLocked("GUILD_CREATE", f.guildJSONLocked(g))
	return r.id
}

// MentionRole has u write text in channel after a mention of role
// (<@&id>, the role in the message's mention_roles, no user in its
// mentions), and returns the message's id.
func (f *Fake) MentionRole(u User, channel, role, text string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	return f.sayLocked(u, channel, "<@&"+role+"> "+text, nil, []string{role})
}

// guildsLocked are READY's guilds: every guild, unavailable until its
// GUILD_CREATE.
func (f *Fake) guildsLocked() []any {
	out := []any{}
	for _, g := range f.sortedGuildsLocked() {
		out = append(out, map[string]any{"id": g.id, "unavailable": true})
	}
	return out
}

func (f *Fake) sortedGuildsLocked() []*guild {
	var out []*guild
	for _, g := range f.guilds {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *guild) int { return cmpID(a.id, b.id) })
	return out
}

// cmpID orders snowflakes (decimal strings) numerically.
func cmpID(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// createGuildsLocked sends each guild's GUILD_CREATE after READY, as
// Discord backfills the guilds READY listed as unavailable.
func (g *gateway) createGuildsLocked() {
	for _, gd := range g.f.sortedGuildsLocked() {
		g.guildEventLocked("GUILD_CREATE", g.f.guildJSONLocked(gd))
	}
}

// guildEventLocked dispatches a guild event to a session that asked for
// the Guilds intent.
func (g *gateway) guildEventLocked(typ string, d any) {
	if g.intents&intentGuilds != 0 {
		g.dispatchLocked(typ, d)
	}
}

// guildJSONLocked is GUILD_CREATE's payload: the guild with its roles,
// channels, threads and the bot's own member (Discord always includes it).
func (f *Fake) guildJSONLocked(g *guild) map[string]any {
	roles, botRoles := []any{}, []string{}
	for _, r := range g.roles {
		roles = append(roles, roleJSON(r))
		if r.botID == f.BotID {
			botRoles = append(botRoles, r.id)
		}
	}
	channels, threads := []any{}, []any{}
	for _, c := range f.channels {
		switch {
		case c.GuildID != g.id:
		case c.Type == TypeThread:
			threads = append(threads, channelJSON(c))
		default:
			channels = append(channels, channelJSON(c))
		}
	}
	joined := g.joined.UTC().Format(time.RFC3339)
	bot := map[string]any{"user": map[string]any{"id": f.BotID, "username": "opsbot", "bot": true}, "roles": botRoles, "joined_at": joined}
	return map[string]any{"id": g.id, "name": "ops", "owner_id": "1000000000000000002", "unavailable": false, "large": false,
		"member_count": 1, "joined_at": joined, "roles": roles, "channels": channels, "threads": threads,
		"members": []any{bot}, "emojis": []any{}, "features": []any{}}
}

// roleJSON is a role object as Discord sends it; a bot's managed role
// carries tags.bot_id.
func roleJSON(r role) map[string]any {
	perms := "0"
	if r.botID != "" {
		perms = botPermissions
	}
	out := map[string]any{"id": r.id, "name": r.name, "color": 0, "hoist": false, "position": 0, "permissions": perms,
		"managed": r.managed, "mentionable": false, "flags": 0}
	if r.botID != "" {
		out["tags"] = map[string]any{"bot_id": r.botID}
	}
	return out
}

// JoinWithoutRole has the bot join guild invited without permissions
// (permissions=0 in the invite URL): Discord makes it no managed role.
func (f *Fake) JoinWithoutRole(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	g := &guild{id: id, joined: time.Now(), roles: []role{{id: id, name: "@everyone"}}}
	f.guilds[id] = g
	f.gw.guildEventLocked("GUILD_CREATE", f.guildJSONLocked(g))
}

// Reauthorize is someone opening the invite URL again for a guild the bot
// is in, with permissions: Discord updates the bot's managed role
// (GUILD_ROLE_UPDATE) or makes it where there was none (GUILD_ROLE_CREATE).
// It returns the role's id.
func (f *Fake) Reauthorize(guild string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.changedLocked()
	g := f.guildLocked(guild)
	for _, r := range g.roles {
		if r.botID == f.BotID {
			f.gw.guildEventLocked("GUILD_ROLE_UPDATE", map[string]any{"guild_id": g.id, "role": roleJSON(r)})
			return r.id
		}
	}
	r := f.botRoleLocked()
	g.roles = append(g.roles, r)
	f.gw.guildEventLocked("GUILD_ROLE_CREATE", map[string]any{"guild_id": g.id, "role": roleJSON(r)})
	return r.id
}
