// Package console is the terminal as a chat platform, for `opsbot ask` and
// `opsbot chat`: Connector is a connectors.Connector like the Slack,
// Discord and web ones, so the terminal runs through the same bot
// (sessions, chat commands, renderer, approval cards). The answer streams
// to stdout, status lines go to stderr, and an approval card is asked y/N
// on the Terminal.
package console
