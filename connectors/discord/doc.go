// Package discord is the Discord connector, over bwmarrin/discordgo: a
// mention of the bot in a text channel opens a public thread from that
// message, the session lives in the thread, the answer is streamed into
// it by edits within the route limits Discord's headers announce, and an
// approval card's buttons come back as clicks acknowledged within the
// platform's 3 seconds.
//
// Messages are Components V2 (IS_COMPONENTS_V2) unless
// discord.components_v2 is false: an answer is text displays of up to
// 4,000 characters, an approval card a container with a section per fact
// and its buttons as the sections' accessories (componentsv2.go); the
// legacy rendering is content, an embed and action rows (render.go). A
// message forwarded into a thread is read as quoted, untrusted context
// (forwarded.go).
//
// Channels and threads: a thread is a channel of its own on Discord, but
// in the neutral model an Event's Channel is the text channel the thread
// hangs from (its parent_id) and Thread is the thread's id, so that
// access and approver rules naming a channel cover its threads. A direct
// message is a session of its own: Channel and Thread are both the DM
// channel's id.
package discord
