package discord

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// botRoles knows, per guild, the bot's managed role: the role Discord
// makes for a bot invited with permissions, named as the bot. Typing
// "@opsbot", a person is offered both the bot and that role; one who picks
// the role sends <@&id> (the role in mention_roles, the bot not in
// mentions), and means the bot all the same.
//
// Discord names a managed role's bot in the role's tags.bot_id, which
// discordgo's Role leaves out, so the guild events are read raw:
// GUILD_CREATE (after READY, and when the bot joins a guild) carries the
// guild's roles, GUILD_ROLE_CREATE/UPDATE a role made or changed (the
// invite URL opened again), GUILD_ROLE_DELETE and GUILD_DELETE (the bot
// removed) end one. No REST call: the role costs no rate limit. Only the
// bot's own role counts, never another role the bot holds (an @oncall
// that pings many people).
type botRoles struct {
	mu      sync.Mutex
	byGuild map[string]string // guild id → role id
}

// wireRole is what the connector reads of a role object.
type wireRole struct {
	ID   string `json:"id"`
	Tags *struct {
		BotID string `json:"bot_id"`
	} `json:"tags"`
}

// of is bot's managed role of role, or false.
func (r wireRole) of(bot string) bool { return r.Tags != nil && bot != "" && r.Tags.BotID == bot }

// guildEvent is what the connector reads of the guild events: GUILD_CREATE
// and GUILD_DELETE are a guild (ID, Unavailable, Roles), the GUILD_ROLE_*
// events a guild's id with a role or a role's id.
type guildEvent struct {
	ID          string     `json:"id"`
	Unavailable bool       `json:"unavailable"`
	Roles       []wireRole `json:"roles"`
	GuildID     string     `json:"guild_id"`
	Role        wireRole   `json:"role"`
	RoleID      string     `json:"role_id"`
}

// of is the bot's managed role in guild ("" when unknown or none).
func (b *botRoles) of(guild string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byGuild[guild]
}

// apply follows a gateway event of type typ (its raw payload d) for bot;
// events other than the guild's are ignored.
func (b *botRoles) apply(typ string, d json.RawMessage, bot string) error {
	switch typ {
	case "GUILD_CREATE", "GUILD_DELETE", "GUILD_ROLE_CREATE", "GUILD_ROLE_UPDATE", "GUILD_ROLE_DELETE":
	default:
		return nil
	}
	var e guildEvent
	if err := json.Unmarshal(d, &e); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch typ {
	case "GUILD_CREATE":
		if !e.Unavailable { // an outage's guild carries no roles: keep what is known
			b.set(e.ID, findRole(e.Roles, bot))
		}
	case "GUILD_DELETE":
		if !e.Unavailable { // the bot was removed; unavailable is an outage
			b.set(e.ID, "")
		}
	case "GUILD_ROLE_CREATE", "GUILD_ROLE_UPDATE":
		if e.Role.of(bot) {
			b.set(e.GuildID, e.Role.ID)
		}
	case "GUILD_ROLE_DELETE":
		if b.byGuild[e.GuildID] == e.RoleID {
			b.set(e.GuildID, "")
		}
	}
	return nil
}

// set records guild's role ("" forgets the guild); the map holds one entry
// a guild the bot is in.
func (b *botRoles) set(guild, role string) {
	if role == "" {
		delete(b.byGuild, guild)
		return
	}
	b.byGuild[guild] = role
}

func findRole(roles []wireRole, bot string) string {
	for _, r := range roles {
		if r.of(bot) {
			return r.ID
		}
	}
	return ""
}

// onGuildEvent follows the bot's managed roles from a gateway event, on
// the gateway's reading goroutine, so a message after the event is read
// with it applied.
func (c *Connector) onGuildEvent(e *discordgo.Event) {
	_, _, botID := c.handlerState()
	if err := c.roles.apply(e.Type, e.RawData, botID); err != nil {
		c.log.Warn("a guild event from Discord could not be read; mentions of the bot's role may be missed", "event", e.Type, "err", err.Error())
	}
}

// roleMentioned reports whether message m mentions role (the bot's managed
// role): in its mention_roles, or in its text (a role people may not ping
// still shows as <@&id>).
func roleMentioned(m *discordgo.Message, role string) bool {
	if role == "" {
		return false
	}
	return slices.Contains(m.MentionRoles, role) || strings.Contains(m.Content, roleMarkup(role))
}

// roleMarkup is a role's mention in a message's text.
func roleMarkup(role string) string { return "<@&" + role + ">" }
