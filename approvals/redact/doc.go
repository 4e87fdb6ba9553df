// Package redact is the one redactor at every boundary: whatever opsbot
// posts, streams, stores, logs, sends to the model or serves through its
// API passes a *Redactor first, so a secret that was read still does not
// leave.
//
// A secret is replaced by "[redacted RULE]", e.g. "[redacted
// aws-access-key]", so a person and the model know something was there.
// It recognises:
//
//   - gitleaks's default credential rules (AWS, GitHub, Slack, JWT and
//     about 210 more), taken as data into rules_gitleaks.go with their ids,
//     keywords, entropy thresholds and allowlists, under gitleaks's MIT
//     license, which that file carries;
//   - its own rules in rules.go: private-key blocks across lines (whole
//     block, BEGIN to END), URLs with a password (the user and host stay),
//     AWS secret keys in assignments, Authorization headers and bearer
//     tokens, and password=/secret=/token=/api_key= assignments, also as
//     JSON ("password": "...") and YAML (password: ...);
//   - every exact value registered with Register: the tokens and API keys
//     opsbot holds from config and environment ([redacted opsbot-secret]).
//
// Why gitleaks as data and not as a library: the module would bring
// viper, wazero, archive readers and a terminal UI toolkit into opsbot's
// build for a few hundred regexes, and its detector works on files and
// commits, not on a stream of lines. The data is regenerated from a
// pinned release, through the Go module proxy, by
//
//	cd approvals/redact && go generate
//
// (see internal/gitleaksgen); nothing is fetched at test or run time.
//
// Text is redacted a line at a time (see MaxLine). A keyword prefilter (one
// Aho-Corasick pass over the line) decides which regexes run at all, and
// a rule whose every match starts with one of its keywords (about 90 of
// them, gitleaks's generic rule among them) is tried only where a keyword
// starts, not from every byte: 64 KiB of journalctl and df output takes
// about 2 ms (BenchmarkRedact).
//
// Known limits, all on the side of showing text: a secret split by the
// cut of a line longer than MaxLine with no blank near the cut; an
// unquoted value with blanks (YAML "password: two words" hides only the
// first word); a secret passed as a separate argument (--password x);
// a registered secret re-encoded (base64, URL escapes). And one on the
// side of hiding: base64-looking lines right after a private key whose
// END was cut off are hidden with it. Stream does the same for text
// arriving in chunks and gives the same result as String on the whole
// text, however it was chunked; ReplaceAttr does it for slog's built-in handlers.
//
// Wiring: cmd/opsbot builds one Redactor at start-up with New(secrets...),
// where secrets are the values of the config's secret-named keys plus
// EnvSecrets(os.Environ()), then removes those variables from its own
// environment. The same Redactor sits at every boundary: the process
// logger (ReplaceAttr); the bot's connectors, so every post, edit, stream
// append and card passes it, the answer being redacted as a whole with its
// unfinished last word held back; command output (NewStream per host and
// stream, before the chat, the model and job tails see it); the agent's
// history (what the model reads back and what compaction archives); and
// the audit trail. Package redacttest holds the seed secrets and the
// assertion their tests share.
package redact
