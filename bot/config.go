package bot

import (
	"fmt"
	"time"
)

// Config is the `bot` section of the config file.
type Config struct {
	// Access lists, per channel, who may talk to the bot; the key "*"
	// covers channels not listed. A channel with no entry (and no "*")
	// is open to everyone who can post there — the default, which in web
	// mode means anyone on this machine.
	Access map[string][]string `yaml:"access"`
	// DataDir holds each session's working directory (default
	// ./opsbot-data).
	DataDir string `yaml:"data_dir"`
	// OnBusy says what a message to the bot does while a turn already runs
	// in its thread, on every platform: "queue" it for after the turn
	// (default) or "cancel" the running turn and start anew.
	OnBusy string `yaml:"on_busy"`
	// ThreadReplies says which messages without a mention are for the bot,
	// on every platform: "addressed" (default): a message in a thread where
	// the bot has a session, unless it @mentions someone else; "mentions":
	// none, only @mentions count.
	ThreadReplies string `yaml:"thread_replies"`
	// RunTimeout bounds a chat `run` that names no --timeout; the
	// composition root sets it from exec.timeout (default 1m).
	RunTimeout time.Duration `yaml:"-"`
}

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	if c.DataDir == "" {
		c.DataDir = "opsbot-data"
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = time.Minute
	}
	if c.OnBusy == "" {
		c.OnBusy = OnBusyQueue
	}
	if c.ThreadReplies == "" {
		c.ThreadReplies = ThreadRepliesAddressed
	}
	return c
}

// The values of Config.OnBusy.
const (
	OnBusyQueue  = "queue"
	OnBusyCancel = "cancel"
)

// The values of Config.ThreadReplies.
const (
	ThreadRepliesAddressed = "addressed"
	ThreadRepliesMentions  = "mentions"
)

// Validate checks the section.
func (c Config) Validate() error {
	switch c.OnBusy {
	case "", OnBusyQueue, OnBusyCancel:
	default:
		return fieldError{"on_busy", fmt.Sprintf("%q is not a choice: use queue or cancel", c.OnBusy)}
	}
	switch c.ThreadReplies {
	case "", ThreadRepliesAddressed, ThreadRepliesMentions:
	default:
		return fieldError{"thread_replies", fmt.Sprintf("%q is not a choice: use addressed (a message in a thread with the bot is for it unless it mentions someone else) or mentions (only messages that mention the bot)", c.ThreadReplies)}
	}
	for ch, users := range c.Access {
		if len(users) == 0 {
			return fieldError{"access." + ch, "lists nobody: remove the entry to open the channel, or name the users who may talk"}
		}
	}
	return nil
}

// allowed reports whether user may talk in channel.
func (c Config) allowed(channel, user string) bool {
	users, ok := c.Access[channel]
	if !ok {
		if users, ok = c.Access["*"]; !ok {
			return true
		}
	}
	for _, u := range users {
		if u == user {
			return true
		}
	}
	return false
}

type fieldError struct{ key, msg string }

func (e fieldError) Error() string { return fmt.Sprintf("%s: %s", e.key, e.msg) }

// Field is the key within the section.
func (e fieldError) Field() string { return e.key }
