// Package deploy_test checks what deploy/ ships against the real opsbot:
// the binary the Dockerfile builds, started the way the image starts it;
// the systemd unit through systemd-analyze; the Helm chart through helm
// lint and helm template, its rendered config run by opsbot. There is no
// Go code in deploy/ besides these tests.
package deploy_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repo is the repository root (the Docker build context).
var repo = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}()

// testVersion is passed as the VERSION build argument, to see that the
// Dockerfile's -ldflags reach the binary.
const testVersion = "deploy-test"

// builtBinary is the binary built from the Dockerfile's build stage.
type builtBinary struct {
	once sync.Once
	dir  string // world-readable, so that the image's uid can run the binary
	bin  string
	out  []byte
	err  error
}

var built builtBinary

// imageBinary builds opsbot exactly as deploy/Dockerfile's build stage
// does (its one `go build` RUN, expanded with the stage's ARGs) and returns
// the binary. Built once per test run.
func imageBinary(t *testing.T) string {
	t.Helper()
	df := readDockerfile(t)
	gb := goBuildCommand(t, df, map[string]string{"VERSION": testVersion})
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "opsbot-deploy-"); built.err != nil {
			return
		}
		if built.err = os.Chmod(built.dir, 0o755); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "opsbot")
		gb := gb.withOutput(built.bin)
		cmd := exec.Command(gb.Args[0], gb.Args[1:]...)
		// The build stage's WORKDIR holds the whole context: the repository.
		cmd.Dir = repo
		// The builder image sets no GOFLAGS; neither may this machine.
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		cmd.Env = append(cmd.Env, gb.Env...)
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("building as the Dockerfile does (%s): %v\n%s", strings.Join(gb.Args, " "), built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func readDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	df, err := parseDockerfile(filepath.Join(repo, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return df
}

// rootfs is a stand-in for the container's file system: container paths
// map to paths under Dir. Only the data volume is writable by the user the
// process runs as.
type rootfs struct {
	Dir      string
	uid, gid int // the image's USER; -1: this process's own
}

// newRootfs makes an empty rootfs. It is world-traversable so that the
// image's uid can reach its parts; Close-time cleanup makes it writable
// again for removal.
func newRootfs(t *testing.T, uid, gid int) *rootfs {
	t.Helper()
	dir, err := os.MkdirTemp("", "opsbot-rootfs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if os.Geteuid() != 0 {
		uid, gid = -1, -1 // cannot switch user: run as ourselves
	}
	return &rootfs{Dir: dir, uid: uid, gid: gid}
}

// path maps a container path into the rootfs.
func (r *rootfs) path(p string) string { return filepath.Join(r.Dir, filepath.FromSlash(p)) }

// mkdir creates a container directory; writable ones belong to the
// image's user, the others are read-only for it.
func (r *rootfs) mkdir(t *testing.T, p string, writable bool) {
	t.Helper()
	dir := r.path(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if !writable {
		return
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if r.uid >= 0 {
		if err := os.Chown(dir, r.uid, r.gid); err != nil {
			t.Fatal(err)
		}
	}
}

// freeze makes every directory of the rootfs but the writable ones
// read-only (0555), as the image's / is for its non-root user.
func (r *rootfs) freeze(t *testing.T, writable ...string) {
	t.Helper()
	keep := map[string]bool{}
	for _, w := range writable {
		keep[r.path(w)] = true
	}
	err := filepath.WalkDir(r.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if keep[p] {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.Chmod(p, 0o555)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// process is opsbot running under test.
type process struct {
	cmd    *exec.Cmd
	addr   string        // host:port it listens on, once started
	pipe   io.ReadCloser // its stderr, where it logs
	exited chan struct{} // closed when it has exited
	err    error         // Wait's result, after exited
	mu     sync.Mutex
	stderr strings.Builder
}

// startOpsbot runs argv in the rootfs (working directory cwd, a container
// path) with env, as the image's user, and waits until it logs that it
// listens — or exits, which fails the test with what it said.
func startOpsbot(t *testing.T, r *rootfs, cwd string, argv, env []string) *process {
	t.Helper()
	p, err := launch(r, cwd, argv, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(t) })
	started := make(chan string, 1)
	go p.readLog(started)
	select {
	case p.addr = <-started:
		return p
	case <-p.exited:
		t.Fatalf("opsbot exited before listening (%v); it said:\n%s", p.err, p.log())
	}
	return nil
}

func launch(r *rootfs, cwd string, argv, env []string) (*process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.path(cwd)
	cmd.Env = env
	if r.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid)}}
	}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p.pipe = pipe
	return p, nil
}

// readLog copies the log into p.stderr and sends the listen address of
// the "opsbot started" record; at EOF it reaps the process.
func (p *process) readLog(started chan<- string) {
	sc := bufio.NewScanner(p.pipe)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.stderr.WriteString(line + "\n")
		p.mu.Unlock()
		var rec struct {
			Msg    string `json:"msg"`
			Listen string `json:"listen"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "opsbot started" {
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(rec.Listen, "http://"))
			started <- net.JoinHostPort("127.0.0.1", port)
		}
	}
	io.Copy(io.Discard, p.pipe)
	p.err = p.cmd.Wait()
	close(p.exited)
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// terminate sends SIGTERM, as `docker stop` and the kubelet do, and
// returns the exit code.
func (p *process) terminate(t *testing.T) int {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	return exitCode(p.err)
}

func (p *process) stop(t *testing.T) {
	select {
	case <-p.exited:
	default:
		p.cmd.Process.Kill()
		<-p.exited
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// get fetches a path from the process and returns status and body.
func (p *process) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v\nopsbot said:\n%s", path, err, p.log())
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// port is the port of the process's listener.
func (p *process) port() string {
	_, port, _ := net.SplitHostPort(p.addr)
	return port
}

// rewriteConfig maps a container config onto the rootfs: values under
// one of the volumes move into it, and web.listen keeps its host but gets
// port 0 (any free port; the test reads the real one from the log). It
// returns the port the config listened on.
func rewriteConfig(t *testing.T, data []byte, r *rootfs, volumes []string) ([]byte, string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			for _, v := range volumes {
				if n.Value == v || strings.HasPrefix(n.Value, v+"/") {
					n.Value = r.path(n.Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	listen := mapValue(&doc, "web", "listen")
	if listen == nil {
		t.Fatal("the config sets no web.listen: opsbot would listen on loopback only, out of the probes' reach")
	}
	host, port, err := net.SplitHostPort(listen.Value)
	if err != nil {
		t.Fatalf("web.listen %q: %v", listen.Value, err)
	}
	listen.Value = net.JoinHostPort(host, "0")
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out, port
}

// mapValue follows keys through nested mappings.
func mapValue(n *yaml.Node, keys ...string) *yaml.Node {
	if n.Kind == yaml.DocumentNode {
		n = n.Content[0]
	}
	for _, k := range keys {
		var next *yaml.Node
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// parseUser reads USER uid:gid (numeric, as Kubernetes' runAsNonRoot needs).
func parseUser(t *testing.T, in instruction) (int, int) {
	t.Helper()
	u, g, _ := strings.Cut(in.Args, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil || uid == 0 {
		t.Fatalf("Dockerfile line %d: USER %s must be a numeric non-root uid:gid, so that runAsNonRoot can check it", in.Line, in.Args)
	}
	return uid, gid
}

// version runs `opsbot version` of the built binary.
func (b *builtBinary) version(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(b.bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("opsbot version: %v\n%s", err, out)
	}
	return string(out)
}
