package redact

import "testing"

func TestSecret(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, s, secret, want string }{
		{"absent", "bad request", "sk-1", "bad request"},
		{"once", "key sk-1 is not valid", "sk-1", "key [redacted] is not valid"},
		{"twice", "sk-1/sk-1", "sk-1", "[redacted]/[redacted]"},
		{"empty secret leaves the text", "key sk-1", "", "key sk-1"},
		{"empty text", "", "sk-1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Secret(tt.s, tt.secret); got != tt.want {
				t.Errorf("Secret(%q) = %q; want %q", tt.s, got, tt.want)
			}
		})
	}
}
