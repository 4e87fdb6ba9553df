package web

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// maxNameRunes is the longest name, in characters.
const maxNameRunes = 40

// maxMarks is how many combining marks one letter may carry: enough for
// the scripts that stack two or three (Vietnamese, Devanagari), not for a
// tower that covers the next line.
const maxMarks = 3

// nameHelp ends every refusal of a chosen name: what a name may be.
const nameHelp = "type the name again using letters, digits, punctuation and single plain spaces"

// checkUser says what is wrong with a person's name, or "": the words a
// person reads, ending with what to do. A name must read as what it is:
// nothing invisible, nothing that reorders the text around it, nothing
// that would pass for the bot, the scripts' name or the self-named mark.
func checkUser(name string) string {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0 || strings.TrimSpace(name) != name:
		return "user: give a name without leading or trailing blanks"
	case n > maxNameRunes:
		return fmt.Sprintf("user: at most %d characters", maxNameRunes)
	}
	if msg := checkRunes(name); msg != "" {
		return fmt.Sprintf("user: %q has %s; %s", name, msg, nameHelp)
	}
	switch key := foldName(name); {
	case key == foldName(BotName):
		return "user: " + BotName + " is the bot's name: choose another"
	case reservedName(name):
		return "user: " + name + " is kept for what the chat marks itself (the scripts' name, or a self-named mark): choose another"
	case strings.IndexFunc(key, isLetterOrDigit) < 0:
		return fmt.Sprintf("user: %q has no letter or digit; a name needs at least one: choose another", name)
	}
	return ""
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// checkRunes says what hidden or misleading character name has and
// where, or "". A combining mark must sit on a letter or digit, a few at
// most.
func checkRunes(name string) string {
	var prev rune = ' '
	marks := 0
	for i, r := range []rune(name) {
		if kind := hiddenKind(r); kind != "" {
			return fmt.Sprintf("%s (U+%04X) at character %d", kind, r, i+1)
		}
		if !unicode.Is(unicode.M, r) {
			prev, marks = r, 0
			continue
		}
		marks++
		switch {
		case !isLetterOrDigit(prev):
			return fmt.Sprintf("a combining mark (U+%04X) with no letter under it at character %d", r, i+1)
		case marks > maxMarks:
			return fmt.Sprintf("more than %d combining marks on one letter at character %d", maxMarks, i+1)
		}
	}
	return ""
}

// hiddenKind says what r is when a reader could not see it or could be
// misled by what it does to the text around it, or "". Most are Unicode's
// invisible classes; the fillers are letters by category that draw
// nothing.
func hiddenKind(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "a character that is not valid text"
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF:
		return "a zero-width character"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return "a right-to-left or left-to-right control"
	case r >= 0xE0000 && r <= 0xE0FFF && !unicode.Is(unicode.Variation_Selector, r):
		return "a tag character"
	case unicode.Is(unicode.Variation_Selector, r):
		return "a variation selector"
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2800:
		return "a blank filler character"
	case unicode.Is(unicode.Cc, r):
		return "a control character"
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return "an invisible formatting character"
	case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), unicode.Is(unicode.Noncharacter_Code_Point, r):
		return "a private-use or non-character code point"
	case unicode.Is(unicode.Z, r) && r != ' ', unicode.IsSpace(r) && r != ' ':
		return "a space other than the plain space"
	case unicode.Is(unicode.Cn, r):
		return "a code point Unicode has not assigned"
	}
	return ""
}

// foldName is the key under which two names are one person to a reader:
// compatibility forms made plain (fullwidth letters, ligatures and
// superscripts, NFKC), case folded, combining marks dropped, invisible
// characters dropped, and runs of spaces made one. `Alice`, `ａｌｉｃｅ`
// and `alicé` all fold to `alice`.
func foldName(name string) string {
	s := strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Mn, unicode.Me) || hiddenKind(r) != "" {
			return -1
		}
		return r
	}, norm.NFKD.String(name))
	// A Caser keeps state: one per call, never shared between goroutines.
	s = norm.NFKC.String(cases.Fold().String(s))
	return strings.Join(strings.Fields(s), " ")
}

// reservedName reports whether a chosen name would pass for someone else:
// the bot, the scripts' name, or a name carrying the self-named mark.
func reservedName(name string) bool {
	key := foldName(name)
	return key == foldName(BotName) || key == foldName(ScriptUser) ||
		strings.HasSuffix(key, foldName(selfNamedMark))
}

// people is the chat's one spelling of each name. Two names with one
// foldName read as one person, so the first spelling the chat knows keeps
// the key: web.users first, then the archive's authors, then each name as
// it is first used. A self-chosen name that folds to another spelling is
// refused; a signed-in one (a key's, a proxy's) is never refused, since
// its spelling is not the client's choice.
type people struct {
	mu    sync.Mutex
	byKey map[string]string
}

func newPeople() *people { return &people{byKey: map[string]string{}} }

// claim takes name's key for it unless another spelling holds the key;
// it returns that spelling, or "" when name is now (or was) its holder.
func (p *people) claim(name string) string {
	key := foldName(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if held, ok := p.byKey[key]; ok && held != name {
		return held
	}
	p.byKey[key] = name
	return ""
}

// load claims the configured users' names, then the archive's authors.
// An author whose name now folds to an earlier spelling (one kept before
// names were folded) keeps their messages, but not the key.
func (p *people) load(ctx context.Context, users []User, archive Archive) error {
	for _, u := range users {
		p.claim(u.Name)
	}
	lister, ok := archive.(PeopleLister)
	if !ok {
		return nil
	}
	names, err := lister.People(ctx)
	for _, name := range names {
		p.claim(name)
	}
	return err
}

// nameTaken is the refusal of a self-chosen name that reads as held,
// another person's spelling.
func nameTaken(name, held string) string {
	return fmt.Sprintf("user: %q reads as %q, a name this chat already knows, and one spelling is one person: "+
		"send exactly %q if that is you, or choose a name that reads differently", name, held, held)
}
