// Package redacttest holds the seed secrets and the leak assertion that
// every boundary's tests share: run the seeds through the boundary, then
// AssertNoSecret on whatever came out (posts, the database file, logs, the
// model's requests).
package redacttest

import (
	"slices"
	"strings"
)

// Seed secrets, one per format the redactor must catch. They are made up,
// and each is long and odd enough not to occur by chance in a test's
// output; AWSExampleKey is AWS's documented example key id, which people
// seed first (gitleaks lets it through; opsbot must not).
const (
	AWSAccessKey  = "AKIAQ3ZB7XK2LMW4RT5N"
	AWSExampleKey = "AKIAIOSFODNN7EXAMPLE"
	AWSSecretKey  = "q8Hv2Lk+Tz9RmW4xPc7NbJ1sYd6Fg0Ua5QiOeZrX"
	GitHubToken   = "ghp_R8fKqT2vWx9LmN4pZc7Yb1HsJd6Ge3Ua5QiO"
	SlackToken    = "xoxb-2048561937-4096813725-Zq8Rk2VtWm9XpLc4NbHy7JdF"
	JWT           = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik9wc2JvdCBUZXN0In0.4Xq9vPz7Kc2LmR8tWb1NyHs3Jd6Fg0Ua5QiOeZxYwVk"
	DBPassword    = "Tr0ub4dor-Xk9q"
	PostgresURL   = "postgres://app:" + DBPassword + "@db-1.internal:5432/orders"
	// The keys opsbot itself holds, as its config and environment give
	// them; a test registers OwnSecrets with the redactor.
	OpenAIKey    = "sk-proj-Vq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5Ye"
	WebAPIKey    = "opsbot-web-3f9c1a7e5b2d8046"
	AnthropicKey = "sk-ant-api03-Hk4Rz9Lq2Tm7Wx1Pv8Nc3Bj6Fd0Gs5Ya"
	// PrivateKey is a PEM block whose body lines are the secret.
	PrivateKey = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBXq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5YeVq3Lz8Rk1TAAAAJgK7d2xCu3d
sQAAAAtzc2gtZWQyNTUxOQAAACBXq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5YeVq3Lz8Rk1T
-----END OPENSSH PRIVATE KEY-----
`
)

// privateKeyLines are the body lines of PrivateKey, each a secret.
var privateKeyLines = []string{
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
	"QyNTUxOQAAACBXq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5YeVq3Lz8Rk1TAAAAJgK7d2xCu3d",
	"sQAAAAtzc2gtZWQyNTUxOQAAACBXq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5YeVq3Lz8Rk1T",
}

// OwnSecrets are the values opsbot holds, to Register with the redactor
// under test (in production they come from config and environment).
var OwnSecrets = []string{OpenAIKey, WebAPIKey, AnthropicKey}

// EnvDump is what `env` or `cat /proc/PID/environ | tr '\0' '\n'` shows
// of opsbot's own process.
var EnvDump = strings.Join([]string{
	"HOME=/var/lib/opsbot",
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"OPENAI_API_KEY=" + OpenAIKey,
	"ANTHROPIC_API_KEY=" + AnthropicKey,
	"OPSBOT_WEB_API_KEY=" + WebAPIKey,
	"AWS_ACCESS_KEY_ID=" + AWSAccessKey,
	"AWS_SECRET_ACCESS_KEY=" + AWSSecretKey,
	"SLACK_BOT_TOKEN=" + SlackToken,
	"GITHUB_TOKEN=" + GitHubToken,
	"DATABASE_URL=" + PostgresURL,
	"LANG=C.UTF-8",
}, "\n") + "\n"

// Secrets are all the seed values; none may appear in any output.
func Secrets() []string {
	s := []string{AWSAccessKey, AWSExampleKey, AWSSecretKey, GitHubToken, SlackToken, JWT, DBPassword, OpenAIKey, WebAPIKey, AnthropicKey}
	return append(s, privateKeyLines...)
}

// Output is a command's output carrying every seed: what a test feeds
// through the boundary under test.
func Output() string {
	return "$ cat deploy/.env\n" + EnvDump +
		"auth: Bearer " + JWT + "\n" +
		"backup key in use: " + AWSExampleKey + "\n" +
		`{"password": "` + DBPassword + `", "user": "app"}` + "\n" +
		"$ cat ~/.ssh/id_ed25519\n" + PrivateKey +
		"done\n"
}

// Chunks is Output cut into pieces that split secrets in two, as output
// arriving over time does: every occurrence of each seed is cut near its
// middle.
func Chunks() []string {
	out := Output()
	var cuts []int
	for _, s := range Secrets() {
		for at := 0; ; {
			i := strings.Index(out[at:], s)
			if i < 0 {
				break
			}
			cuts = append(cuts, at+i+len(s)/2)
			at += i + len(s)
		}
	}
	var chunks []string
	at := 0
	slices.Sort(cuts)
	for _, c := range slices.Compact(cuts) {
		chunks = append(chunks, out[at:c])
		at = c
	}
	return append(chunks, out[at:])
}

// TB is what AssertNoSecret needs of a test; *testing.T and *testing.B
// have it. Declared here so that this package does not import testing.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// AssertNoSecret fails t for each secret found in any of outputs, naming
// the output and where, without printing the secret itself in full.
func AssertNoSecret(t TB, secrets []string, outputs ...string) {
	t.Helper()
	for i, out := range outputs {
		for _, s := range secrets {
			if s == "" {
				continue
			}
			if at := strings.Index(out, s); at >= 0 {
				t.Errorf("output %d leaks secret %s… at byte %d: %q", i, s[:min(4, len(s))], at, excerpt(out, at, len(s)))
			}
		}
	}
}

// excerpt is the text around a leak, with the secret masked.
func excerpt(out string, at, n int) string {
	from, to := max(0, at-30), min(len(out), at+n+30)
	return out[from:at] + "<SECRET>" + out[at+n:to]
}
