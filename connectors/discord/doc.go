// Package discord is the Discord connector, over bwmarrin/discordgo: a
// mention of the bot in a text channel opens a public thread from that
// message, the session lives in the thread, the answer is streamed into
// it by edits within the route limits Discord's headers announce, and an
// approval card's buttons come back as clicks acknowledged within the
// platform's 3 seconds.
//
// Channels and threads: a thread is a channel of its own on Discord, but
// in the neutral model an Event's Channel is the text channel the thread
// hangs from (its parent_id) and Thread is the thread's id, so that
// access and approver rules naming a channel cover its threads. A direct
// message is a session of its own: Channel and Thread are both the DM
// channel's id.
package discord
