// Package render shows an answer in a chat thread as it is written: a
// Renderer streams the model's text by message edits (or a platform's
// native stream) within the platform's length and edit limits, an
// EditBudget shares one workspace's edit allowance among the answers
// streaming there, and Split cuts a long answer into pages that never
// leave a code block open. It knows connectors, not the bot.
package render
