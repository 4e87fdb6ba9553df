package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3" // quickCheck opens the copy
)

// Binary runs the litestream binary: what the sidecar's socket does not
// offer (a replica's last transaction, restores).
type Binary struct {
	Path string
}

// Latest is the last transaction replica holds; ok is false when it
// holds none (no leader of that generation replicated anything).
func (b Binary) Latest(ctx context.Context, replica string) (txid uint64, ok bool, err error) {
	out, err := b.output(ctx, "ltx", "-json", replica)
	if err != nil {
		return 0, false, err
	}
	var files []struct {
		MaxTXID string `json:"max_txid"`
	}
	if err := json.Unmarshal(out, &files); err != nil {
		return 0, false, fmt.Errorf("read the replica's list of transactions: %w", err)
	}
	for _, f := range files {
		n, err := strconv.ParseUint(f.MaxTXID, 16, 64)
		if err != nil {
			return 0, false, fmt.Errorf("read the replica's list of transactions: %q is not a transaction id", f.MaxTXID)
		}
		txid, ok = max(txid, n), true
	}
	return txid, ok, nil
}

// Restore writes replica's last state to out (which must not exist)
// and checks its integrity.
func (b Binary) Restore(ctx context.Context, replica, out string) error {
	_, err := b.output(ctx, "restore", "-integrity-check", "quick", "-o", out, replica)
	return err
}

func (b Binary) output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.Path, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the litestream binary %q is not there: set ha.litestream.bin to its path", b.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("litestream %s: %s", args[0], lastLine(stderr.String(), err))
	}
	return out, nil
}

// lastLine is the last line litestream wrote, or err's text.
func lastLine(s string, err error) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

// Follower keeps a warm copy of one generation's replica: `litestream
// restore -f`, which applies each new transaction as it lands.
type Follower struct {
	bin      Binary
	interval time.Duration
	log      *slog.Logger

	path string // the copy
	gen  int64  // the generation it follows; -1 for none
	url  string
	cmd  *exec.Cmd
	done chan struct{}
}

// NewFollower keeps its copy at path.
func NewFollower(s Settings, path string, log *slog.Logger) *Follower {
	s = s.WithDefaults()
	return &Follower{bin: Binary{s.Bin}, interval: s.FollowInterval, log: log, path: path, gen: -1}
}

// Follow makes the copy follow replica, generation gen's: a copy of
// another generation is dropped and restored anew. It returns once the
// follower has started; an error says why it could not.
func (f *Follower) Follow(ctx context.Context, gen int64, replica string) error {
	if f.cmd != nil && f.gen == gen && f.alive() {
		return nil
	}
	f.Stop()
	if _, err := os.Stat(f.path + "-txid"); f.gen != gen || err != nil {
		// Another generation's copy, an earlier process's (it may have
		// died mid-transaction), or one litestream cannot resume (it
		// knows where a copy stands only by its -txid file).
		removeDB(f.path)
	}
	cmd := exec.Command(f.bin.Path, "restore", "-f", "-follow-interval", f.interval.String(), "-o", f.path, replica)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start litestream restore -f: %w", err)
	}
	f.cmd, f.gen, f.url, f.done = cmd, gen, replica, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(f.done)
	return nil
}

func (f *Follower) alive() bool {
	select {
	case <-f.done:
		return false
	default:
		return true
	}
}

// Applied is the last transaction the copy holds.
func (f *Follower) Applied() uint64 {
	b, err := os.ReadFile(f.path + "-txid")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
	return n
}

// Stop ends the follower; the copy stays, unless the follower had to be
// killed: it may have stopped in the middle of a transaction, with a
// -txid file that says it applied it whole, so a catch-up restores the
// replica instead. (A new process never resumes an earlier one's copy:
// its first Follow drops it, for the same reason.)
func (f *Follower) Stop() {
	if f.cmd == nil {
		return
	}
	f.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-f.done:
	case <-time.After(5 * time.Second):
		f.cmd.Process.Kill()
		<-f.done
		removeDB(f.path)
	}
	f.cmd = nil
}

// CatchUp makes db the last state of the newest replica before
// generation gen (a new leader's), from warm's copy when it follows that
// generation and reaches its last transaction within wait, else by a
// whole restore; the state is checked for integrity first. No replica at
// all (the first leader) leaves db as it is. It says which generation it
// took the state from, -1 for none.
func CatchUp(ctx context.Context, s Settings, gen int64, db string, warm *Follower, wait time.Duration, log *slog.Logger) (int64, error) {
	s = s.WithDefaults()
	bin := Binary{s.Bin}
	if _, taken, err := bin.Latest(ctx, s.Generation(gen)); err != nil {
		return -1, err
	} else if taken {
		return -1, fmt.Errorf("the replica already holds a database under this opsbot's generation (%s), which an earlier leader wrote: it would be overwritten. Restart opsbot: the next leader moves its generation past the replica's. Should this repeat, set ha.litestream.replica to a new folder, seeded by a restore of the old one", s.Generation(gen))
	}
	from, last, err := newest(ctx, s, bin, gen)
	if err != nil {
		return -1, err
	}
	if from < 0 {
		if warm != nil {
			warm.Stop()
		}
		log.Info("no earlier generation replicated anything: this leader starts from its own database")
		return -1, nil
	}
	copyPath, by := "", "the standby's copy"
	if warm != nil && warm.gen == from {
		deadline := time.Now().Add(wait)
		for warm.Applied() < last && time.Now().Before(deadline) && warm.alive() {
			select {
			case <-ctx.Done():
				return -1, ctx.Err()
			case <-time.After(50 * time.Millisecond): // the follower's file is the only signal it gives
			}
		}
		warm.Stop()
		if warm.Applied() >= last {
			copyPath = warm.path
		} else {
			log.Warn("the standby's copy did not reach the replica's last transaction: restoring it whole", "generation", from, "copy", warm.Applied(), "replica", last)
		}
	} else if warm != nil {
		warm.Stop()
	}
	if copyPath == "" {
		copyPath, by = db+".restore", "a whole restore"
		removeDB(copyPath)
		if err := bin.Restore(ctx, s.Generation(from), copyPath); err != nil {
			return -1, err
		}
	}
	if err := quickCheck(ctx, copyPath); err != nil {
		removeDB(copyPath)
		return -1, err
	}
	removeDB(db)
	os.RemoveAll(metaDir(db))
	if err := os.Rename(copyPath, db); err != nil {
		return -1, err
	}
	os.Remove(copyPath + "-txid")
	for _, ext := range []string{"-wal", "-shm"} {
		os.Rename(copyPath+ext, db+ext)
	}
	log.Info("caught up with the replica", "generation", from, "txid", last, "by", by)
	return from, nil
}

// Taken says whether a generation from gen on already holds a database,
// and if so the newest that does: the Lease was recreated (a reinstall
// that kept the bucket), and its generations start again below what the
// replica holds, whether or not gen's own replica holds anything. The
// new leader moves the Lease past it (leader.Elector.Advance). A file://
// replica is listed; any other is probed upward, probes generations at a
// time, until a whole window holds nothing.
func Taken(ctx context.Context, s Settings, gen int64) (newest int64, taken bool, err error) {
	s = s.WithDefaults()
	bin := Binary{s.Bin}
	newest = -1
	all, listed, err := folders(s, math.MaxInt64)
	if err != nil {
		return -1, false, err
	}
	for lo := gen; ; lo += probes {
		var window []int64
		if listed {
			for _, g := range all {
				if g >= gen {
					window = append(window, g)
				}
			}
		} else {
			for g := lo; g < lo+probes; g++ {
				window = append(window, g)
			}
		}
		_, oks, err := probe(ctx, s, bin, window)
		if err != nil {
			return -1, false, err
		}
		found := false
		for i, ok := range oks {
			if ok {
				newest, found = max(newest, window[i]), true
			}
		}
		if listed || !found {
			return newest, newest >= 0, nil
		}
	}
}

// probe asks each generation's replica for its last transaction, at
// once: ok[i] says whether gens[i]'s holds any.
func probe(ctx context.Context, s Settings, bin Binary, gens []int64) (txids []uint64, ok []bool, err error) {
	txids, ok = make([]uint64, len(gens)), make([]bool, len(gens))
	errs := make([]error, len(gens))
	var wg sync.WaitGroup
	for i, g := range gens {
		wg.Go(func() { txids[i], ok[i], errs[i] = bin.Latest(ctx, s.Generation(g)) })
	}
	wg.Wait()
	return txids, ok, errors.Join(errs...)
}

// probes is how many generations newest probes at once.
const probes = 16

// newest finds the newest generation before gen whose replica holds a
// transaction, and its last one; -1 for none. Every earlier generation
// is looked at, however many leaders died before their sidecar
// replicated anything: a new leader never starts empty while a replica
// holds state. A file:// replica is listed; any other is probed,
// probes generations at a time, newest first.
func newest(ctx context.Context, s Settings, bin Binary, gen int64) (from int64, last uint64, err error) {
	gens, ok, err := folders(s, gen)
	if err != nil {
		return -1, 0, err
	}
	if !ok {
		for g := range gen {
			gens = append(gens, g)
		}
	}
	for hi := len(gens); hi > 0; hi -= probes {
		window := gens[max(hi-probes, 0):hi]
		txids, oks, err := probe(ctx, s, bin, window)
		if err != nil {
			return -1, 0, err
		}
		for i := len(window) - 1; i >= 0; i-- {
			if oks[i] {
				return window[i], txids[i], nil
			}
		}
	}
	return -1, 0, nil
}

// folders is the generations before gen a file:// replica has a folder
// for, oldest first; ok is false for a replica that is not listed
// (s3://…): every generation may then hold one.
func folders(s Settings, gen int64) (gens []int64, ok bool, err error) {
	u, err := url.Parse(s.Replica)
	if err != nil || u.Scheme != "file" {
		return nil, false, nil
	}
	entries, err := os.ReadDir(u.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list the replica's generations: %w", err)
	}
	for _, e := range entries {
		var g int64
		if n, _ := fmt.Sscanf(e.Name(), "generation-%d", &g); n == 1 && e.IsDir() && g < gen && e.Name() == filepath.Base(s.Generation(g)) {
			gens = append(gens, g)
		}
	}
	slices.Sort(gens)
	return gens, true, nil
}

// quickCheck runs SQLite's quick_check on the file at path.
func quickCheck(ctx context.Context, path string) error {
	conn, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer conn.Close()
	var res string
	if err := conn.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return fmt.Errorf("the replica's copy cannot be read as a database: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("the replica's copy failed SQLite's integrity check: %s", res)
	}
	return nil
}

// removeDB removes a database file and what SQLite and Litestream keep
// beside it.
func removeDB(path string) {
	for _, ext := range []string{"", "-wal", "-shm", "-journal", "-txid"} {
		os.Remove(path + ext)
	}
}

// metaDir is where the sidecar keeps its position in the database at
// path: dropped with a database it no longer describes.
func metaDir(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-litestream")
}
