package discordtest

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// FlagComponentsV2 is IS_COMPONENTS_V2 (1<<15): the message is made of
// components alone.
const FlagComponentsV2 = 1 << 15

// Components V2's limits
// (https://discord.com/developers/docs/components/reference, "Using
// message components"): 40 components at every depth, 4,000 characters
// across the text displays, ten children in a container, one to three
// texts in a section.
const (
	MaxV2Components  = 40
	MaxV2Text        = 4000
	MaxInContainer   = 10
	MaxSectionTexts  = 3
	maxAccentColour  = 0xFFFFFF
	typeActionRow    = 1
	typeButton       = 2
	typeSection      = 9
	typeTextDisplay  = 10
	typeThumbnail    = 11
	typeMediaGallery = 12
	typeFile         = 13
	typeSeparator    = 14
	typeContainer    = 17
)

// v2Component is any Components V2 component, as the fake reads it.
type v2Component struct {
	Type        int             `json:"type"`
	Style       int             `json:"style"`
	Label       string          `json:"label"`
	CustomID    string          `json:"custom_id"`
	URL         string          `json:"url"`
	Content     *string         `json:"content"`
	AccentColor *int            `json:"accent_color"`
	Spacing     *int            `json:"spacing"`
	Components  []v2Component   `json:"components"`
	Accessory   *v2Component    `json:"accessory"`
	Media       json.RawMessage `json:"media"`
}

// v2Check walks a V2 message, counting what Discord counts.
type v2Check struct {
	components int
	text       int
	customIDs  map[string]bool
}

// validateV2 refuses a V2 message Discord refuses: content, embeds,
// stickers or a poll beside the flag; components past 40 or text past
// 4,000 characters; a component where its parent takes none of its type;
// a section without an accessory.
func validateV2(mb messageBody) *apiError {
	switch {
	case mb.Content != nil && *mb.Content != "":
		return invalid("content: Cannot send content with the IS_COMPONENTS_V2 flag")
	case len(mb.Embeds) > 0:
		return invalid("embeds: Cannot send embeds with the IS_COMPONENTS_V2 flag")
	case len(mb.StickerIDs) > 0:
		return invalid("sticker_ids: Cannot send stickers with the IS_COMPONENTS_V2 flag")
	case len(mb.Poll) > 0 && string(mb.Poll) != "null":
		return invalid("poll: Cannot send a poll with the IS_COMPONENTS_V2 flag")
	}
	var top []v2Component
	if err := json.Unmarshal(mb.Components, &top); err != nil || len(top) == 0 {
		return invalid("components: Must be between 1 and 40 in length")
	}
	ck := &v2Check{customIDs: map[string]bool{}}
	for _, c := range top {
		if e := ck.component(c, "components", topLevel); e != nil {
			return e
		}
	}
	if ck.components > MaxV2Components {
		return invalid("components: Must be 40 or fewer in total (got %d)", ck.components)
	}
	if ck.text > MaxV2Text {
		return invalid("components: The total length of text displays must be 4000 or fewer (got %d)", ck.text)
	}
	return nil
}

// Where a component may stand, by type.
var (
	topLevel    = types(typeActionRow, typeSection, typeTextDisplay, typeMediaGallery, typeFile, typeSeparator, typeContainer)
	inContainer = types(typeActionRow, typeSection, typeTextDisplay, typeMediaGallery, typeFile, typeSeparator)
	inSection   = types(typeTextDisplay)
	asAccessory = types(typeButton, typeThumbnail)
	inRow       = types(typeButton)
)

func types(ts ...int) map[int]bool {
	m := map[int]bool{}
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// component checks c, found at path where allowed types may stand.
func (ck *v2Check) component(c v2Component, path string, allowed map[int]bool) *apiError {
	ck.components++
	if !allowed[c.Type] {
		return invalid("%s.type: Component type %d is not allowed here", path, c.Type)
	}
	switch c.Type {
	case typeTextDisplay:
		if c.Content == nil || *c.Content == "" {
			return invalid("%s.content: This field is required", path)
		}
		ck.text += utf8.RuneCountInString(*c.Content)
	case typeSection:
		return ck.section(c, path)
	case typeContainer:
		if c.AccentColor != nil && (*c.AccentColor < 0 || *c.AccentColor > maxAccentColour) {
			return invalid("%s.accent_color: Must be between 0 and 16777215", path)
		}
		return ck.children(c.Components, path, 1, MaxInContainer, inContainer)
	case typeActionRow:
		return ck.children(c.Components, path, 1, MaxPerRow, inRow)
	case typeButton:
		return ck.button(c, path)
	case typeSeparator:
		if c.Spacing != nil && *c.Spacing != 1 && *c.Spacing != 2 {
			return invalid("%s.spacing: Value must be one of (1, 2)", path)
		}
	case typeThumbnail:
		if len(c.Media) == 0 {
			return invalid("%s.media: This field is required", path)
		}
	}
	return nil
}

// section checks a section: one to three text displays and an accessory.
func (ck *v2Check) section(c v2Component, path string) *apiError {
	if c.Accessory == nil {
		return invalid("%s.accessory: This field is required", path)
	}
	if e := ck.children(c.Components, path, 1, MaxSectionTexts, inSection); e != nil {
		return e
	}
	return ck.component(*c.Accessory, path+".accessory", asAccessory)
}

// children checks the components of a layout: between lo and hi of them,
// each of an allowed type.
func (ck *v2Check) children(cs []v2Component, path string, lo, hi int, allowed map[int]bool) *apiError {
	if len(cs) < lo || len(cs) > hi {
		return invalid("%s.components: Must be between %d and %d in length", path, lo, hi)
	}
	for _, c := range cs {
		if e := ck.component(c, path+".components", allowed); e != nil {
			return e
		}
	}
	return nil
}

// button checks a button as validateComponents does for a legacy one.
func (ck *v2Check) button(b v2Component, path string) *apiError {
	if b.Style < 1 || b.Style > 5 {
		return invalid("%s.style: not a button style", path)
	}
	if utf8.RuneCountInString(b.Label) > MaxLabel {
		return invalid("%s.label: Must be 80 or fewer in length", path)
	}
	if b.Style == 5 {
		return nil
	}
	if n := len(b.CustomID); n < 1 || n > MaxCustomID {
		return invalid("%s.custom_id: Must be between 1 and 100 in length", path)
	}
	if ck.customIDs[b.CustomID] {
		return invalid("%s.custom_id: Component custom id cannot be duplicated", path)
	}
	ck.customIDs[b.CustomID] = true
	return nil
}

// shownV2 is the text a V2 message shows: its text displays in order, a
// line each.
func shownV2(raw json.RawMessage) string {
	var top []v2Component
	json.Unmarshal(raw, &top)
	var lines []string
	var walk func([]v2Component)
	walk = func(cs []v2Component) {
		for _, c := range cs {
			if c.Type == typeTextDisplay && c.Content != nil {
				lines = append(lines, *c.Content)
			}
			walk(c.Components)
		}
	}
	walk(top)
	return strings.Join(lines, "\n")
}

// buttonsOf are the custom_ids of the buttons in components, at every
// depth (rows, sections' accessories, containers).
func buttonsOf(raw json.RawMessage) []string {
	var top []v2Component
	json.Unmarshal(raw, &top)
	var out []string
	var walk func([]v2Component)
	walk = func(cs []v2Component) {
		for _, c := range cs {
			if c.Type == typeButton && c.CustomID != "" {
				out = append(out, c.CustomID)
			}
			if c.Accessory != nil {
				walk([]v2Component{*c.Accessory})
			}
			walk(c.Components)
		}
	}
	walk(top)
	return out
}
