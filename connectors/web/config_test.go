package web

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		key  string // "" for valid
	}{
		{"the default", Config{}, ""},
		{"loopback", Config{Listen: "127.0.0.1:9000"}, ""},
		{"IPv6 loopback", Config{Listen: "[::1]:9000"}, ""},
		{"all interfaces, no key", Config{Listen: "0.0.0.0:8080"}, "api_key"},
		{"all interfaces with a key", Config{Listen: ":8080", APIKey: "k"}, ""},
		{"no port", Config{Listen: "127.0.0.1"}, "listen"},
		{"channels", Config{Channels: []string{"ops", "dev-1", "on_call"}}, ""},
		{"a capital", Config{Channels: []string{"Ops"}}, "channels"},
		{"a slash", Config{Channels: []string{"ops/x"}}, "channels"},
		{"twice", Config{Channels: []string{"ops", "ops"}}, "channels"},
		{"on_busy cancel", Config{OnBusy: "cancel"}, ""},
		{"on_busy unknown", Config{OnBusy: "drop"}, "on_busy"},
		{"two users", Config{Users: []User{{Name: "alice", KeySHA256: strings.Repeat("a", 64)}, {Name: "bob", KeySHA256: strings.Repeat("b", 64)}}}, ""},
		{"two users who read alike", Config{Users: []User{{Name: "alice", KeySHA256: strings.Repeat("a", 64)}, {Name: "Ａlice", KeySHA256: strings.Repeat("b", 64)}}}, "users"},
		{"a user with a zero-width space", Config{Users: []User{{Name: "alice\u200b", KeySHA256: strings.Repeat("a", 64)}}}, "users"},
	}
	for _, tt := range tests {
		err := tt.cfg.WithDefaults().Validate()
		var key string
		if f, ok := err.(interface{ Field() string }); ok {
			key = f.Field()
		}
		if (err == nil) != (tt.key == "") || key != tt.key {
			t.Errorf("%s: %v, want an error about %q", tt.name, err, tt.key)
		}
	}
	d := Config{}.WithDefaults()
	if d.Listen != DefaultListen || !reflect.DeepEqual(d.Channels, []string{"ops"}) || d.OnBusy != OnBusyQueue {
		t.Errorf("defaults: %+v", d)
	}
}

// The example config documents every key of the web section, with values
// that pass validation.
func TestExampleDocumentsWebSection(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "opsbot.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Web yaml.Node `yaml:"web"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for i := 0; i+1 < len(doc.Web.Content); i += 2 {
		documented[doc.Web.Content[i].Value] = true
	}
	// A deprecated key is still read but no longer set in the example:
	// its comment there points to the key that replaced it.
	deprecated := map[string]string{"on_busy": "bot.on_busy"}
	typ := reflect.TypeOf(Config{})
	for i := range typ.NumField() {
		key := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
		if by, ok := deprecated[key]; ok {
			if !strings.Contains(string(data), "web."+key) || !strings.Contains(string(data), by) {
				t.Errorf("deploy/opsbot.example.yaml does not say that web.%s gave way to %s", key, by)
			}
			continue
		}
		if !documented[key] {
			t.Errorf("deploy/opsbot.example.yaml does not document web.%s", key)
		}
	}
	var cfg Config
	if err := doc.Web.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.APIKey = "" // ${OPSBOT_WEB_API_KEY:-} expands to nothing
	if err := cfg.WithDefaults().Validate(); err != nil {
		t.Errorf("the example's web section: %v", err)
	}
}
