package redact

import (
	"strings"
	"testing"
)

// redactCase is one line of text and what it must become.
type redactCase struct {
	name, in, want string
}

func runCases(t *testing.T, r *Redactor, cases []redactCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactFormats(t *testing.T) {
	t.Parallel()
	runCases(t, New(), []redactCase{
		{"aws access key", "key id AKIAQ3ZB7XK2LMW4RT5N in use", "key id [redacted aws-access-key] in use"},
		{"aws session key", "ASIAY34FZKBOKMUTVV7A", "[redacted aws-access-key]"},
		// AWS's documented example key id: gitleaks lets it through as a
		// placeholder; a chat redacts it like any other.
		{"aws example key", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "export AWS_ACCESS_KEY_ID=[redacted aws-access-key]"},
		{"aws secret key assignment", "aws_secret_access_key = q8Hv2Lk+Tz9RmW4xPc7NbJ1sYd6Fg0Ua5QiOeZrX",
			"aws_secret_access_key = [redacted aws-secret-key]"},
		{"aws secret key in env", "AWS_SECRET_ACCESS_KEY=q8Hv2Lk+Tz9RmW4xPc7NbJ1sYd6Fg0Ua5QiOeZrX",
			"AWS_SECRET_ACCESS_KEY=[redacted aws-secret-key]"},
		{"github pat", "token ghp_R8fKqT2vWx9LmN4pZc7Yb1HsJd6Ge3Ua5QiO ok", "token [redacted github-pat] ok"},
		{"github oauth", "gho_R8fKqT2vWx9LmN4pZc7Yb1HsJd6Ge3Ua5QiO", "[redacted github-oauth]"},
		{"github app", "ghs_R8fKqT2vWx9LmN4pZc7Yb1HsJd6Ge3Ua5QiO", "[redacted github-app-token]"},
		{"github fine-grained", "github_pat_11ABCDEFG0" + strings.Repeat("aZ3kQ9mX2p", 7) + "Lw", "[redacted github-fine-grained-pat]"},
		{"slack bot", "xoxb-2048561937-4096813725-Zq8Rk2VtWm9XpLc4NbHy7JdF", "[redacted slack-bot-token]"},
		{"slack user", "xoxp-2048561937-4096813725-4096813726-0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e", "[redacted slack-user-token]"},
		{"slack app", "xapp-1-A02B3C4D5E6-4096813725123-0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e", "[redacted slack-app-token]"},
		{"slack legacy workspace", "xoxa-2-2048561937-4096813725-0f3a9c1e5b7d2f4a", "[redacted slack-legacy-workspace-token]"},
		{"jwt", "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.4Xq9vPz7Kc2LmR8tWb1NyHs3Jd6Fg0Ua5QiOeZxYwVk",
			"Authorization: Bearer [redacted jwt]"},
		{"bare jwt", "id_token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.4Xq9vPz7Kc2LmR8tWb1NyHs3Jd6Fg0Ua5QiOeZxYwVk end",
			"id_token [redacted jwt] end"},
		{"url password", "postgres://app:Tr0ub4dor-Xk9q@db-1.internal:5432/orders", "postgres://app:[redacted url-password]@db-1.internal:5432/orders"},
		{"url password https", "fetching https://deploy:s3cr3tpass@git.example.com/repo.git", "fetching https://deploy:[redacted url-password]@git.example.com/repo.git"},
		{"password assignment", "password=hunter22", "password=[redacted secret-assignment]"},
		{"short password", "DB_PASSWORD=abc", "DB_PASSWORD=[redacted secret-assignment]"},
		{"secret assignment", "client_secret: notsorandom", "client_secret: [redacted secret-assignment]"},
		{"token flag", "--token=mytoken99 --verbose", "--token=[redacted secret-assignment] --verbose"},
		{"api key", "api_key = 'abc def'", "api_key = '[redacted secret-assignment]'"},
		{"json password", `{"user": "app", "password": "correct horse"}`, `{"user": "app", "password": "[redacted secret-assignment]"}`},
		{"yaml password", "  password: changeme", "  password: [redacted secret-assignment]"},
		{"query token", "GET /hook?token=abc123xyz&x=1", "GET /hook?token=[redacted secret-assignment]&x=1"},
	})
}

func TestRedactLeavesOrdinaryText(t *testing.T) {
	t.Parallel()
	same := []string{
		"commit 3f2a9c1e5b7d2f4a6c8e0b1d3f5a7c9e0f3a9c1e",
		"Merge: 3f2a9c1 5b7d2f4",
		"request_id=9b2f6c1e-4d7a-4b8e-9f0a-1c2d3e4f5a6b status=200",
		"uuid 550e8400-e29b-41d4-a716-446655440000",
		"Nov 24 10:02:11 web-1 sshd[812]: Accepted publickey for deploy from 10.0.4.7 port 52311 ssh2: ED25519 SHA256:Jx3mQ9vR2kL8pT5wZ1cN7bH4dF6gS0aY3eU8iO2qWxE",
		"Nov 24 10:02:11 web-1 sshd[815]: Failed password for invalid user admin from 203.0.113.9 port 40022 ssh2",
		"Filesystem      Size  Used Avail Use% Mounted on",
		"/dev/nvme0n1p2  468G  201G  244G  46% /",
		"the password is stored in the vault; ask ops for it",
		"Enter password:",
		"passwd: password updated successfully",
		"image: registry.example.com/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b4b0b822cd15d6c15b0f00a08",
		"payload=SGVsbG8sIHRoaXMgaXMgYSBiYXNlNjQgbG9nIGxpbmUgdGhhdCBpcyBoYXJtbGVzcw==",
		"max_tokens: 1024",
		"token_expiry=3600",
		"secret: ${DB_SECRET}",
		"https://example.com:8443/path?q=1",
		"user@example.com wrote:",
		"Nov 24 10:03:00 web-1 kernel: [ 1234.567890] EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro",
		"Nov 24 10:03:01 web-1 systemd[1]: Started nginx.service - A high performance web server.",
	}
	r := New()
	for _, s := range same {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q; want it unchanged", s, got)
		}
	}
}

func TestRedactOwnSecrets(t *testing.T) {
	t.Parallel()
	r := New("opsbot-web-3f9c1a7e5b2d8046", "short")
	r.Register("sk-proj-Vq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5Ye", "")
	runCases(t, r, []redactCase{
		{"registered at start", "key opsbot-web-3f9c1a7e5b2d8046!", "key [redacted opsbot-secret]!"},
		{"registered later", "x sk-proj-Vq3Lz8Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5Ye y", "x [redacted opsbot-secret] y"},
		{"twice on a line", "opsbot-web-3f9c1a7e5b2d8046 and opsbot-web-3f9c1a7e5b2d8046", "[redacted opsbot-secret] and [redacted opsbot-secret]"},
		{"too short to register", "a short word", "a short word"},
		{"inside an assignment", "OPSBOT_WEB_API_KEY=opsbot-web-3f9c1a7e5b2d8046", "OPSBOT_WEB_API_KEY=[redacted opsbot-secret]"},
	})
}

func TestRedactPrivateKey(t *testing.T) {
	t.Parallel()
	body := "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" +
		"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
	r := New()
	runCases(t, r, []redactCase{
		{"block", "before\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nafter\n",
			"before\n[redacted private-key]\nafter\n"},
		{"encrypted with headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n" + body + "-----END RSA PRIVATE KEY-----\n",
			"[redacted private-key]\n"},
		{"indented in yaml", "key: |\n  -----BEGIN EC PRIVATE KEY-----\n  " + strings.ReplaceAll(body, "\n", "\n  ") + "-----END EC PRIVATE KEY-----\nnext: 1\n",
			"key: |\n  [redacted private-key]\nnext: 1\n"},
		{"escaped in json", `{"key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n", "n": 1}`,
			`{"key": "[redacted private-key]\n", "n": 1}`},
		// A truncated key ends at the first line that is not key material.
		{"cut short by head", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + "exit status 0\n", "[redacted private-key]exit status 0\n"},
		{"authorization header", "authorization: token 0f3a9c1e5b7d2f4a", "authorization: token [redacted authorization-header]"},
		{"public key left alone", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----\n",
			"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----\n"},
	})
}

func TestRedactLongLine(t *testing.T) {
	t.Parallel()
	r := New()
	// A token past MaxLine in a long line, after a blank the cut can use.
	filler := strings.Repeat("word ", MaxLine/5)
	in := filler + "ghp_R8fKqT2vWx9LmN4pZc7Yb1HsJd6Ge3Ua5QiO " + filler
	got := r.String(in)
	if strings.Contains(got, "ghp_R8f") || got != filler+"[redacted github-pat] "+filler {
		t.Errorf("long line not redacted as expected: %q…", got[len(filler)-10:len(filler)+40])
	}
}

func TestEnvSecrets(t *testing.T) {
	t.Parallel()
	env := []string{"HOME=/root", "OPENAI_API_KEY=sk-0123456789abcdef", "SLACK_BOT_TOKEN=xoxb-1", "DB_PASSWORD=longenough", "LANG=C.UTF-8", "NOEQUALS"}
	got := EnvSecrets(env)
	want := []string{"sk-0123456789abcdef", "longenough"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("EnvSecrets = %q; want %q", got, want)
	}
}

func TestRegisterWhileRedacting(t *testing.T) {
	t.Parallel()
	r := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			r.Register(strings.Repeat("s", 8) + string(rune('a'+i%26)))
		}
	}()
	for range 50 {
		r.String("line with ssssssssa in it\n")
	}
	<-done
	if got := r.String("x ssssssssz y"); got != "x [redacted opsbot-secret] y" {
		t.Errorf("after Register: %q", got)
	}
}

// Every rule's expressions compile (they are compiled when a line first
// needs them, lazyRegexp), anchored forms included.
func TestEveryRuleCompiles(t *testing.T) {
	t.Parallel()
	rs := defaultRules()
	for i := range rs.rules {
		r := &rs.rules[i]
		if r.re.get() == nil || (r.anchored != nil && r.anchored.get() == nil) {
			t.Errorf("rule %s does not compile", r.id)
		}
	}
	if len(rs.rules) < 100 {
		t.Errorf("%d rules; want the gitleaks set and opsbot's own", len(rs.rules))
	}
}
