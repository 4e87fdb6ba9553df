package discord

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// permissions are what the bot needs in a channel: see it, write, embed
// a card's fields, read the thread, open threads and write in them.
const permissions = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionEmbedLinks |
	discordgo.PermissionReadMessageHistory | discordgo.PermissionCreatePublicThreads | discordgo.PermissionSendMessagesInThreads

// docs/DISCORD.md's permission integer and invite URL are these
// permissions, recomputed from discordgo's constants.
func TestPermissionIntegerInDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/DISCORD.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(permissions)
	if !strings.Contains(string(doc), "= **"+want+"**") || !strings.Contains(string(doc), "&permissions="+want) {
		t.Errorf("docs/DISCORD.md does not give the permission integer %s in its sum and its invite URL", want)
	}
}
