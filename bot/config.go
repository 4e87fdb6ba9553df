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
	// MaxQueue is how many messages may wait behind a thread's running
	// work (default 10); past it a message is turned away with a reply
	// saying the thread is busy (the web API answers 429).
	MaxQueue int `yaml:"max_queue"`
	// MaxTurns is how many threads may run work (an answer, a `run`) at
	// once (default 16); the others wait their turn, first come first
	// served.
	MaxTurns int `yaml:"max_turns"`
	// MaxWaiting is how many threads may wait for one of those turns
	// (default 200); past it a message that would start another is turned
	// away with a reply saying opsbot is busy (the web API answers 429).
	MaxWaiting int `yaml:"max_waiting"`
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
	if c.MaxQueue <= 0 {
		c.MaxQueue = 10
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = 16
	}
	if c.MaxWaiting <= 0 {
		c.MaxWaiting = 200
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
	for _, n := range []struct {
		key string
		v   int
	}{{"max_queue", c.MaxQueue}, {"max_turns", c.MaxTurns}, {"max_waiting", c.MaxWaiting}} {
		if n.v < 0 {
			return fieldError{n.key, "must be a positive number (0 or absent means the default)"}
		}
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
