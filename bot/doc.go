// Package bot is the router: it maps platform threads to agent sessions,
// runs one turn at a time per thread, answers the deterministic chat
// commands, renders streamed answers by message edits, posts approval cards
// and delivers job notifications.
package bot
