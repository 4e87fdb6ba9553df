package slack

// The Slack app's manifest (deploy/slack-app-manifest.yaml) must grant
// what the connector uses: a scope for every Web API method it calls, and
// the bot events it reads. The manifest's test checks both against these.

// MethodScopes maps each Web API method the connector calls to the bot
// scope it needs ("" for none: auth.test; apps.connections.open takes the
// app-level token, scope connections:write).
var MethodScopes = map[string]string{
	"auth.test":                             "",
	"apps.connections.open":                 "",
	"chat.postMessage":                      "chat:write",
	"chat.update":                           "chat:write",
	"chat.postEphemeral":                    "chat:write",
	"chat.startStream":                      "chat:write",
	"chat.appendStream":                     "chat:write",
	"chat.stopStream":                       "chat:write",
	"users.info":                            "users:read",
	"conversations.replies":                 "channels:history",
	"usergroups.users.list":                 "usergroups:read",
	"assistant.threads.setStatus":           "assistant:write",
	"assistant.threads.setSuggestedPrompts": "assistant:write",
	"assistant.threads.setTitle":            "assistant:write",
	"reactions.add":                         "reactions:write",
	"reactions.remove":                      "reactions:write",
}

// OptionalScopes are the scopes the bot works without: assistant:write
// (with Slack's Agents & AI Apps feature) adds the thinking status,
// suggested prompts and thread titles, and a workspace without it refuses
// those calls quietly; reactions:write adds the reaction that tells a
// question is taken before its answer's first words (signs.go).
var OptionalScopes = map[string]bool{"assistant:write": true, "reactions:write": true}

// BotEvents are the events the connector reads, each with the scope it
// needs.
var BotEvents = map[string]string{
	"app_mention":      "app_mentions:read",
	"message.channels": "channels:history",
	"message.groups":   "groups:history",
	"message.im":       "im:history",
	// assistant_thread_started: a person opened the bot's assistant pane
	// (Agents & AI Apps; optional).
	"assistant_thread_started": "assistant:write",
}
