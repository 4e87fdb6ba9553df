package policy

import (
	"fmt"
	"path"
	"strings"
)

// DefaultSecretPaths are the credentials no command reads without a
// person: an entry starting with "/" is an absolute path and everything
// under it; "~/" starts a path in any home directory (/root, /home/*,
// /var/lib/jenkins: it matches wherever that path ends a longer one); an
// entry without "/" is a file of that name in any directory. "*", "?"
// and [...] are wildcards. policy.secret_paths adds entries; opsbot's own
// config file, database and data directory are added by the composition
// root.
var DefaultSecretPaths = []string{
	// account passwords
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
	// SSH and TLS private keys
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "id_xmss",
	"/etc/ssh/ssh_host_*_key", "*.key", "privkey*.pem", "/etc/ssl/private", "/etc/pki/tls/private",
	"/etc/letsencrypt/live", "/etc/letsencrypt/archive", "/etc/kubernetes/pki", "/etc/kubernetes/*.conf",
	"/etc/rancher/k3s/k3s.yaml", "/var/lib/kubelet/pki", "/var/lib/kubelet/kubeconfig", "/run/secrets", "/var/run/secrets",
	"*.keytab", "*.p12", "*.pfx", "*.jks", "/etc/wireguard", "/etc/ipsec.secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
	"/etc/NetworkManager/system-connections", "/etc/mysql/debian.cnf", "/var/lib/docker/containers/*/config.v2.json",
	// the environment, memory and files of other processes
	"/proc/*/environ", "/proc/*/root", "/proc/*/cwd", "/proc/*/fd", "/proc/*/map_files", "/proc/*/mem",
	"/proc/kcore", "/dev/mem", "/dev/kmem", "/dev/port",
	// raw disks and their partitions hold every file, secrets included
	"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/dm-*", "/dev/md*", "/dev/loop*",
	"/dev/nbd*", "/dev/rbd*", "/dev/zram*", "/dev/sr*", "/dev/mapper", "/dev/disk", "/dev/block",
	// cloud, cluster, registry and VCS credentials
	"~/.aws", "~/.kube", "~/.docker/config.json", "~/.git-credentials", "~/.netrc", "~/.pgpass", "~/.my.cnf",
	"~/.config/gcloud", "~/.azure", "~/.config/gh", "~/.vault-token", "~/.npmrc", "~/.pypirc", "~/.gnupg",
	"~/.password-store", "~/.ssh/*_key", "~/.terraform.d/credentials.tfrc.json", "~/.config/rclone",
	// shell and tool histories
	".bash_history", ".zsh_history", ".sh_history", ".ash_history", ".history", "*_history", ".lesshst",
	"~/.local/share/fish/fish_history", ".viminfo",
	// opsbot's usual places
	"/etc/opsbot", "/var/lib/opsbot", "opsbot.env", "opsbot.db*",
	// applications' environment files (dotenv) and PEM files, which hold
	// private keys as often as certificates
	".env", ".env.*", "*.pem",
}

// secretKind is how an entry of the secret list matches a path.
type secretKind int

const (
	secretAbs  secretKind = iota // an absolute path and what is under it
	secretHome                   // a path in any home directory
	secretBase                   // a file name in any directory
)

// secretEntry is one compiled entry.
type secretEntry struct {
	raw  string
	kind secretKind
	// pat is a wildcard pattern; for secretHome the path below the home
	// directory, starting with "/".
	pat string
}

// secretList is the compiled secret list.
type secretList struct{ entries []secretEntry }

// compileSecrets compiles the entries; an absolute entry reached on this
// machine through a symlink is added again as the path the symlink leads
// to.
func compileSecrets(list []string) secretList {
	var s secretList
	for _, raw := range list {
		e := compileSecret(raw)
		s.entries = append(s.entries, e)
		if e.kind == secretAbs && !hasWildcard(e.pat) {
			if real, _ := placeLocal(e.pat); real != e.pat && real[0] == '/' {
				s.entries = append(s.entries, secretEntry{raw: raw, kind: secretAbs, pat: real})
			}
		}
	}
	return s
}

func compileSecret(raw string) secretEntry {
	// An entry's "*" spans directories: /proc/*/environ covers
	// /proc/1/task/1/environ too.
	p := strings.NewReplacer(string(anyName), string(anyString), string(noDot), "").Replace(globToPattern(raw))
	switch {
	case strings.HasPrefix(p, "~/"):
		return secretEntry{raw: raw, kind: secretHome, pat: path.Clean(p[1:])}
	case strings.HasPrefix(p, "/"):
		return secretEntry{raw: raw, kind: secretAbs, pat: path.Clean(p)}
	}
	return secretEntry{raw: raw, kind: secretBase, pat: p}
}

// matchAbs returns the entry an absolute path pattern may name, or "".
func (s secretList) matchAbs(p string) string {
	for _, e := range s.entries {
		pat := e.pat
		switch e.kind {
		case secretHome:
			pat = string(anyString) + pat // a home directory may be anywhere
			fallthrough
		case secretAbs:
			if overlap(p, pat) || overlap(p, pat+"/"+string(anyString)) {
				return e.raw
			}
		case secretBase:
			if b := basePattern(p); !onlyGlob(b) && overlap(b, e.pat) {
				return e.raw
			}
		}
	}
	return ""
}

// matchInHome returns the entry a path relative to some home directory
// (or to the session's own directory) may name, or "": absolute entries
// are elsewhere.
func (s secretList) matchInHome(rel string) string {
	p := path.Clean("/" + rel)
	for _, e := range s.entries {
		switch e.kind {
		case secretHome:
			if overlap(p, e.pat) || overlap(p, e.pat+"/"+string(anyString)) {
				return e.raw
			}
		case secretBase:
			if b := basePattern(p); !onlyGlob(b) && overlap(b, e.pat) {
				return e.raw
			}
		}
	}
	return ""
}

// under returns an absolute entry inside the directory pattern dir, or "".
func (s secretList) under(dir string) string {
	for _, e := range s.entries {
		if e.kind == secretAbs && overlap(strings.TrimSuffix(dir, "/")+"/"+string(anyString), e.pat) {
			return e.raw
		}
	}
	return ""
}

// basePattern is the last path element of a pattern; when it holds an
// anyString, which may stand for more elements, only what follows the
// last one is certain.
func basePattern(p string) string {
	base := p[strings.LastIndexByte(p, '/')+1:]
	if i := strings.LastIndexByte(base, anyString); i >= 0 { // may hold several elements
		return base[i:]
	}
	return base
}

// pathSeparators end a path inside a longer word: an option's "=", a
// HOST:PATH, a list, an awk or sed program's quotes and redirections.
const pathSeparators = " \t\n'\"`;(){}<>|&,=:"

// maxBundle bounds the short-option bundles whose tails are tried as
// attached values.
const maxBundle = 64

// pathCandidates are the strings in a word pattern that may be paths:
// each field between separators, within a field the rest from its first
// "/" or "~/" (-f/etc/shadow, @/etc/shadow) or after a leading "@" (a
// response file: strings @shadow after cd /etc), and in a bundle of
// short options every tail, as any letter may take the rest as its value
// (grep -fshadow after cd /etc).
func pathCandidates(word string) []string {
	fields := strings.FieldsFunc(word, func(r rune) bool { return strings.ContainsRune(pathSeparators, r) })
	var out []string
	for _, f := range fields {
		out = append(out, f)
		if i := strings.IndexByte(f, '/'); i > 0 {
			out = append(out, f[i:])
		}
		if i := strings.Index(f, "~/"); i > 0 { // HEAD~1 is no home
			out = append(out, f[i:])
		}
		if len(f) > 1 && f[0] == '@' { // a response file (strings @FILE), curl -d @FILE
			out = append(out, f[1:])
		}
		if len(f) > 2 && len(f) <= maxBundle && f[0] == '-' && f[1] != '-' {
			for k := 2; k < len(f); k++ {
				out = append(out, f[k:])
			}
		}
	}
	if len(out) == 0 && word != "" {
		out = append(out, word)
	}
	return out
}

// secretIn returns the secret entry the word pattern may name, or "".
// unplaced says the path's folder is not known before it runs (it climbs
// out of the working directory, or follows a cd to a computed place): the
// entry is then only one of the places it could be, not what it names.
func (w *walker) secretIn(word string) (entry string, unplaced bool) {
	for _, c := range pathCandidates(word) {
		if e, u := w.secretPath(c); e != "" {
			return e, u
		}
	}
	return "", false
}

// secretCite is how a reason cites the secret entry a path matched: by
// name when the path names it; when its folder is known only when it
// runs, the entry is one place of many it could be, so none is named (a
// try-out read "../x.yaml … (secret path /etc/shadow)").
func secretCite(entry string, unplaced bool) string {
	if unplaced {
		return "its folder is known only when it runs, so it could be a file that holds credentials"
	}
	return "it holds credentials (secret path " + entry + ")"
}

// secretPath judges one path pattern, resolved as the shell and the
// kernel will (paths.go): its "~" forms expanded, a relative path in the
// login or session directory and in any directory a cd in the command
// line went to, and ".." walked from where symlinks lead.
func (w *walker) secretPath(c string) (entry string, unplaced bool) {
	switch {
	case c[0] == '~':
		return w.secretTilde(c)
	case c[0] == '/' || c[0] == anyString:
		return w.secretAbsPath(c)
	}
	return w.secretRelative(c)
}

// secretAbsPath judges an absolute path pattern (or one starting with
// anyString) in every form it may take once the kernel walks it.
func (w *walker) secretAbsPath(p string) (entry string, unplaced bool) {
	forms, unplaced := w.placeForms(p)
	for _, f := range forms {
		if e := w.policy.secrets.matchAbs(f); e != "" {
			return e, unplaced
		}
	}
	return "", false
}

// local reports whether the command runs on the bot's own host, where
// the policy can look at the file system it reads.
func (w *walker) local() bool { return w.target.Host == localHostName }

// localHostName is the built-in host that is the bot's own machine
// (hosts.LocalHost).
const localHostName = "local"

// secretArg returns the secret entry the word may name, or "". A process
// substitution is a pipe from a command classified on its own, not the
// /dev/fd path that stands for it.
func (w *walker) secretArg(a arg) (entry string, unplaced bool) {
	if a.procSubst {
		return "", false
	}
	return w.secretIn(a.pattern())
}

// secretRead adds to c when an argument names a secret path, or an
// option names a file the program reads (filelists.go).
func (w *walker) secretRead(c *Command, args []arg) {
	defer w.programDirs(c.Program, args)()
	w.fileOptionReads(c, args)
	if metadataOnly[c.Program] {
		return
	}
	code := codeOperand(c.Program, args)
	for i, a := range args {
		if i == code {
			continue
		}
		if e, unplaced := w.secretArg(a); e != "" {
			c.add(Approve, c.Program+" "+secretReadReason(a, e, unplaced))
			return
		}
	}
}

// codeOperand is the index in args of the word that is the program's
// code, not a path it reads, or -1: jq's filter, where .env is a field
// and not the file .env (checkJq refuses a filter that reads files or
// the environment). Its files (--slurpfile, --rawfile, the inputs) are
// still paths.
func codeOperand(program string, args []arg) int {
	if program != "jq" {
		return -1
	}
	for i := 0; i < len(args); i++ {
		v := args[i].val
		switch {
		case !args[i].static():
			return -1 // checkJq asks a person
		case v == "--":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1].val, "-") {
				return i + 1
			}
			return -1
		case jqValueOpts[v] > 0:
			i += jqValueOpts[v]
		case v == "-" || !strings.HasPrefix(v, "-"):
			return i
		}
	}
	return -1
}

// secretReadReason says why reading the word a, which matched the secret
// entry, needs approval.
func secretReadReason(a arg, entry string, unplaced bool) string {
	if a.pattern() == string(anyString) {
		// Not "secret path /etc/shadow": the word is computed when it
		// runs, so it could name any credential file.
		return fmt.Sprintf("may read %s, a path computed when it runs, which could be a file that holds credentials", a.show())
	}
	return fmt.Sprintf("may read %s: %s", a.show(), secretCite(entry, unplaced))
}

// metadataOnly programs show names, sizes and types of files, never what
// is in them.
var metadataOnly = map[string]bool{
	"ls": true, "stat": true, "find": true, "du": true, "test": true, "[": true, "readlink": true, "realpath": true,
	"basename": true, "dirname": true, "namei": true, "lsattr": true, "getfacl": true, "echo": true, "printf": true,
	"which": true, "type": true, "whereis": true, "whatis": true, "tree": true, "df": true, "lsof": true, "file": true,
	"cd": true, "pushd": true, "popd": true, "dirs": true,
	// Their operands are process ids and names, never files (ps's
	// environment dumps, `ps e`, are judged on their own).
	"ps": true, "pgrep": true, "pidof": true, "pstree": true,
}

// secretUnder says which secret a recursive read of dir would reach, or
// "": anything under a home directory, the root or a relative directory
// (a home or session directory), or an absolute secret entry inside dir.
func (w *walker) secretUnder(dir arg) string {
	p := dir.pattern()
	if p == "" || p[0] != '/' && p[0] != anyString {
		return "files in a home or working directory"
	}
	forms, _ := w.placeForms(p)
	for _, f := range forms {
		if f == "/" || f[0] == anyString || f == "/home" || f == "/root" || strings.HasPrefix(f, "/home/") || strings.HasPrefix(f, "/root/") {
			return "files in home directories"
		}
		if e := w.policy.secrets.under(f); e != "" {
			return e
		}
	}
	return ""
}
