package discordtest

import (
	"encoding/json"
	"unicode/utf8"
)

// Discord's limits on a message
// (https://discord.com/developers/docs/resources/message#create-message,
// .../components/reference).
const (
	MaxContent   = 2000
	MaxRows      = 5
	MaxPerRow    = 5
	MaxCustomID  = 100
	MaxLabel     = 80
	MaxEmbeds    = 10
	MaxFields    = 25
	MaxFieldName = 256
	MaxFieldVal  = 1024
)

type component struct {
	Type       int         `json:"type"`
	Style      int         `json:"style"`
	Label      string      `json:"label"`
	CustomID   string      `json:"custom_id"`
	URL        string      `json:"url"`
	Components []component `json:"components"`
}

type embed struct {
	Fields []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"fields"`
	Footer *struct {
		Text string `json:"text"`
	} `json:"footer"`
}

type allowed struct {
	Parse []string `json:"parse"`
	Users []string `json:"users"`
	Roles []string `json:"roles"`
}

// validate refuses what Discord refuses, with its error: a Components V2
// message by V2's rules (validateV2), any other by the legacy ones.
func validate(mb messageBody) *apiError {
	if mb.Flags&FlagComponentsV2 != 0 {
		if e := validateV2(mb); e != nil {
			return e
		}
		return validateMentions(mb.AllowedMentions)
	}
	if mb.Content != nil && utf8.RuneCountInString(*mb.Content) > MaxContent {
		return invalid("content: Must be 2000 or fewer in length (got %d)", utf8.RuneCountInString(*mb.Content))
	}
	if e := validateComponents(mb.Components); e != nil {
		return e
	}
	if len(mb.Embeds) > MaxEmbeds {
		return invalid("embeds: Must be 10 or fewer in length")
	}
	for _, raw := range mb.Embeds {
		var e embed
		if json.Unmarshal(raw, &e) != nil {
			return invalid("embeds: not an embed")
		}
		if len(e.Fields) > MaxFields {
			return invalid("embeds.fields: Must be 25 or fewer in length")
		}
		for _, fl := range e.Fields {
			if n := utf8.RuneCountInString(fl.Name); n < 1 || n > MaxFieldName {
				return invalid("embeds.fields.name: Must be between 1 and 256 in length")
			}
			if n := utf8.RuneCountInString(fl.Value); n < 1 || n > MaxFieldVal {
				return invalid("embeds.fields.value: Must be between 1 and 1024 in length")
			}
		}
	}
	return validateMentions(mb.AllowedMentions)
}

// validateMentions refuses an allowed_mentions Discord refuses.
func validateMentions(raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var a allowed
	if json.Unmarshal(raw, &a) != nil {
		return invalid("allowed_mentions: not an object")
	}
	for _, p := range a.Parse {
		if (p == "users" && len(a.Users) > 0) || (p == "roles" && len(a.Roles) > 0) {
			return invalid("allowed_mentions: parse:[%q] and %s are mutually exclusive", p, p)
		}
	}
	return nil
}

func validateComponents(raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var rows []component
	if json.Unmarshal(raw, &rows) != nil {
		return invalid("components: not a list of components")
	}
	if len(rows) > MaxRows {
		return invalid("components: Must be 5 or fewer in length")
	}
	seen := map[string]bool{}
	for _, row := range rows {
		if row.Type != 1 {
			return invalid("components: a top-level component must be an action row (type 1)")
		}
		if len(row.Components) < 1 || len(row.Components) > MaxPerRow {
			return invalid("components.components: Must be between 1 and 5 in length")
		}
		for _, b := range row.Components {
			if b.Type != 2 {
				continue
			}
			if b.Style < 1 || b.Style > 5 {
				return invalid("components.style: not a button style")
			}
			if utf8.RuneCountInString(b.Label) > MaxLabel {
				return invalid("components.label: Must be 80 or fewer in length")
			}
			if b.Style == 5 {
				continue // a link carries a url, not a custom_id
			}
			if n := len(b.CustomID); n < 1 || n > MaxCustomID {
				return invalid("components.custom_id: Must be between 1 and 100 in length")
			}
			if seen[b.CustomID] {
				return invalid("components.custom_id: Component custom id cannot be duplicated")
			}
			seen[b.CustomID] = true
		}
	}
	return nil
}

func hasRows(raw json.RawMessage) bool {
	var rows []component
	return json.Unmarshal(raw, &rows) == nil && len(rows) > 0
}
