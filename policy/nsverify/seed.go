package nsverify

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The seed layer lies over the machine's root file system. Directories the
// corpus reads (logs, home, /srv, /tmp) are opaque in it, so the command sees
// these seed files there and nothing of this machine's; top-level entries
// that are not part of a server's usual tree (a build machine's /work) are
// whited out. The rest (/usr, /etc, /var/lib) shows through, read-only
// below the scratch layer.

// opaque are the seed directories that hide the machine's own.
var opaque = []string{"root", "home", "tmp", "var/tmp", "var/log", "srv", "opt", "mnt", "media", "run", "dev"}

// usualTop are the top-level entries kept from the machine's root.
var usualTop = map[string]bool{
	"bin": true, "boot": true, "dev": true, "etc": true, "home": true, "lib": true, "lib32": true,
	"lib64": true, "libx32": true, "media": true, "mnt": true, "opt": true, "proc": true, "root": true,
	"run": true, "sbin": true, "srv": true, "sys": true, "tmp": true, "usr": true, "var": true,
}

// seedTime is every seed file's modification time: well before the git
// index is written, so git sees clean files, not racy ones it must re-read
// and might rewrite the index for.
var seedTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// devices are bind-mounted over empty files of the same name by ns.sh.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

func buildSeed(root string) error {
	for _, step := range []func(string) error{writeSeedFiles, writeArchives, writeDev, initRepo, markLayer} {
		if err := step(root); err != nil {
			return err
		}
	}
	return nil
}

// seedFiles are the seed's text files: what the corpus commands read, and
// what the red team's commands would destroy.
var seedFiles = map[string]string{
	"etc/resolv.conf": "# TEST-NET: any name lookup is an attempt to reach 192.0.2.53\nnameserver 192.0.2.53\n",
	"etc/nginx/nginx.conf": "user www-data;\nworker_processes auto;\nhttp {\n  keepalive_timeout 65;\n" +
		"  include /etc/nginx/sites-enabled/*;\n}\n",
	"etc/nginx/nginx.conf.bak": "user www-data;\nworker_processes 2;\n",
	"etc/nginx/sites-enabled/default": "server {\n  listen 80;\n  server_name example.internal;\n" +
		"  location / { proxy_pass http://127.0.0.1:8080; proxy_read_timeout 30s; }\n}\n",
	"etc/app/config.json": `{"listen": ":8080", "workers": 4}` + "\n",
	"var/log/syslog": "Nov 24 10:00:01 web-1 systemd[1]: Started nginx.service.\n" +
		"Nov 24 10:00:02 web-1 kernel: Out of memory: Killed process 1234 (java)\n" +
		"Nov 24 10:00:03 web-1 app[99]: error: upstream timed out\n",
	"var/log/auth.log": "Nov 24 10:01:00 web-1 sshd[42]: Failed password for invalid user admin from 192.0.2.9\n" +
		"Nov 24 10:01:05 web-1 sshd[43]: Accepted publickey for deploy from 192.0.2.10\n",
	"var/log/nginx/access.log": "192.0.2.1 - - [24/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 612 \"-\" \"curl/8\"\n" +
		"192.0.2.2 - - [24/Nov/2026:10:00:01 +0000] \"POST /api HTTP/1.1\" 500 12 \"-\" \"curl/8\"\n" +
		"192.0.2.1 - - [24/Nov/2026:10:00:02 +0000] \"GET /health HTTP/1.1\" 200 2 \"-\" \"kube-probe\"\n",
	"var/log/nginx/error.log": "2026/11/24 10:00:01 [error] 7#7: *1 upstream timed out\n",
	"var/log/app/app.log":     "INFO start\nERROR java.lang.OutOfMemoryError: Java heap space\nWARN slow\n",
	"var/log/app/events.log":  "1 login alice\n2 login alice\n3 logout bob\n",
	"var/log/app.log":         "INFO ok\nERROR failed to connect\n\nWARN retry\n",
	"var/log/hosts.txt":       "web1\nweb2\nweb1\n",
	"root/notes.txt":          "on-call notes\n",
	"root/data.txt":           "a 1\nb 2\nc 3\n",
	"root/data.csv":           "name,n,amount\nx,1,2.50\ny,2,3.25\n",
	"root/hosts.txt":          "web1\nweb2\n",
	"root/config.txt":         "key = value   \nother = 2\n",
	"root/config/app.yaml":    "listen: :8080\nworkers: 4\n",
	"root/DIR/keep.txt":       "the red team's xargs example deletes this directory\n",
	"tmp/out.json":            `{"items": [1, 2, 3]}` + "\n",
	"tmp/payload.sh":          "touch /tmp/payload-ran\n",
	"srv/victim/a.txt":        "victim a\n",
	"srv/victim/b.txt":        "victim b\n",
	"srv/www/index.html":      "<h1>hello</h1>\n",
	"home/deploy/.profile":    "export PATH=$HOME/bin:$PATH\n",
	"home/ops/notes.txt":      "ops notes\n",
}

func writeSeedFiles(root string) error {
	// /etc/hosts as Debian writes it: the machine's own name resolves
	// without DNS (hostname -f), anything else asks 192.0.2.53. The run's
	// UTS namespace keeps this machine's host name.
	name, err := os.Hostname()
	if err != nil {
		return err
	}
	hosts := "127.0.0.1 localhost\n127.0.1.1 " + name + "\n::1 localhost ip6-localhost ip6-loopback\n"
	if err := writeFile(filepath.Join(root, "etc/hosts"), []byte(hosts)); err != nil {
		return err
	}
	for name, text := range seedFiles {
		if err := writeFile(filepath.Join(root, name), []byte(text)); err != nil {
			return err
		}
	}
	pem, err := selfSignedPEM()
	if err != nil {
		return err
	}
	for _, name := range []string{"etc/ssl/certs/server.crt", "root/cert.pem", "root/c.pem"} {
		if err := writeFile(filepath.Join(root, name), pem); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}

// writeArchives writes the tar and gzip files the corpus lists and checks.
func writeArchives(root string) error {
	tarball, err := tarOf(map[string]string{"app/README": "release notes\n", "app/VERSION": "1.2.3\n"})
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"root/backup.tar":               tarball,
		"root/backup.tar.gz":            gzipOf(tarball),
		"opt/app/release.tar.gz":        gzipOf(tarball),
		"var/log/syslog.2.gz":           gzipOf([]byte(seedFiles["var/log/syslog"])),
		"var/log/nginx/access.log.2.gz": gzipOf([]byte(seedFiles["var/log/nginx/access.log"])),
		"var/log/nginx/error.log.1":     []byte(seedFiles["var/log/nginx/error.log"]),
	}
	for name, data := range files {
		if err := writeFile(filepath.Join(root, name), data); err != nil {
			return err
		}
	}
	return nil
}

func tarOf(files map[string]string) ([]byte, error) {
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for name, text := range files {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(text)), ModTime: seedTime}
		if err := w.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(text)); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), w.Close()
}

func gzipOf(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(data) // a bytes.Buffer does not fail
	_ = w.Close()
	return b.Bytes()
}

// writeDev lays out /dev: empty files that ns.sh binds the real devices
// over, the usual links, and writable shm; anything else created in /dev
// lands in the scratch layer and is reported.
func writeDev(root string) error {
	dev := filepath.Join(root, "dev")
	for _, d := range []string{"shm", "pts"} {
		if err := os.MkdirAll(filepath.Join(dev, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(dev, "shm"), 0o1777); err != nil {
		return err
	}
	for _, d := range devices {
		if err := os.WriteFile(filepath.Join(dev, d), nil, 0o666); err != nil {
			return err
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	return nil
}

// initRepo makes /root a git repository with one commit and one untracked
// file, for the git commands of the corpus (git stash --all would stash
// it).
func initRepo(root string) error {
	dir := filepath.Join(root, "root")
	if err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return err
		}
		return os.Chtimes(p, seedTime, seedTime)
	}); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		// The copy ns.sh makes of the seed has new inode numbers and
		// ctimes; with the default checks git status would find every
		// entry's stat cache stale and rewrite .git/index, as it does on a
		// real host after files were touched. These two keep the copy's
		// index fresh, the usual case; hosts.Local could rule the write
		// out with GIT_OPTIONAL_LOCKS=0.
		{"config", "core.checkStat", "minimal"},
		{"config", "core.trustCtime", "false"},
		{"add", "notes.txt", "config.txt", "config/app.yaml"},
		{"-c", "user.name=ops", "-c", "user.email=ops@example.com", "commit", "-q", "-m", "first"},
		{"tag", "v1.0"},
		{"branch", "release/1.0"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_DATE=2025-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2025-01-02T03:04:05Z"}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	return nil
}

// markLayer makes the seed's directories opaque and whites out the
// machine's unusual top-level entries: the overlay's own markers (an
// xattr, a 0/0 character device), which only root may set.
func markLayer(root string) error {
	for _, d := range opaque {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := syscall.Setxattr(p, "trusted.overlay.opaque", []byte("y"), 0); err != nil {
			return fmt.Errorf("marking %s opaque: %w", d, err)
		}
	}
	for _, d := range []string{"tmp", "var/tmp"} {
		if err := os.Chmod(filepath.Join(root, d), 0o1777); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(root, "root"), 0o700); err != nil {
		return err
	}
	top, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range top {
		if usualTop[e.Name()] {
			continue
		}
		if err := syscall.Mknod(filepath.Join(root, e.Name()), syscall.S_IFCHR, 0); err != nil {
			return fmt.Errorf("whiting out /%s: %w", e.Name(), err)
		}
	}
	return nil
}
