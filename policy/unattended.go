package policy

import "strconv"

// UnattendedEnv is the environment every command the policy allows without
// a person runs with, on every host: it shuts the ways "read-only" tools
// run code named in files the command does not name, which the classifier
// cannot see from the command line.
//
// git reads commands from the repository's config. The keys that hold one
// command for the whole repository are overridden here: environment
// variables git prefers to the config (GIT_PAGER beats core.pager and
// pager.<cmd>, GIT_SSH_COMMAND core.sshCommand, GIT_ASKPASS core.askPass,
// GIT_PROXY_COMMAND core.gitProxy, GIT_EDITOR core.editor), and
// GIT_CONFIG_COUNT entries, which git reads last and so win over the
// repository's own values and its include.path and includeIf files.
// GIT_OPTIONAL_LOCKS=0 keeps status from rewriting the index.
// GIT_ALLOW_PROTOCOL, which git prefers to every protocol.*.allow, lets
// no transport run: no read the policy allows talks to a remote, and so
// none runs remote.<name>.uploadpack or fetches a partial clone's
// missing objects (GIT_NO_LAZY_FETCH does that too from git 2.45). The
// variables are never empty, so that an executor dropping empty ones
// cannot give the repository's config back its say; the one empty
// GIT_CONFIG_VALUE, dropped, makes git refuse to run at all.
//
// Some keys no environment can shut, as their name comes from
// .gitattributes or an empty value breaks the command:
// diff.<driver>.textconv (explicit --textconv needs approval, the
// porcelain's default textconv does not), diff.external and
// diff.<driver>.command (git diff runs them unless --no-ext-diff),
// filter.<driver>.clean and smudge (status and diff run them on
// work-tree files), remote.<name>.uploadpack and url.<base>.insteadOf
// (git ls-remote needs approval, and no transport runs anyway). The sandbox under every unapproved
// command carries those.
//
// python imports modules from the working directory (python3 -m
// json.tool imports ./json.py); PYTHONSAFEPATH (3.11 and later) keeps it
// off sys.path, and the classifier wants -I where that is not known.
func UnattendedEnv() []string {
	env := []string{
		"PYTHONSAFEPATH=1", "PYTHONNOUSERSITE=1",
		"GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=false", "GIT_SEQUENCE_EDITOR=false",
		"GIT_ASKPASS=false", "SSH_ASKPASS=false", "GIT_TERMINAL_PROMPT=0", "GIT_SSH_COMMAND=ssh", "GIT_PROXY_COMMAND=false",
		"GIT_OPTIONAL_LOCKS=0", "GIT_ALLOW_PROTOCOL=none", "GIT_NO_LAZY_FETCH=1",
	}
	for i, kv := range gitOverrides {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(gitOverrides)))
}

// gitOverrides are the config keys naming one command for a whole
// repository that no environment variable of git's overrides, with the
// value that runs nothing of the repository's: an empty credential.helper
// empties the list of helpers read before it; gpg.* are git's defaults.
var gitOverrides = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"credential.helper", ""},
	{"log.showSignature", "false"},
	{"gpg.program", "gpg"},
	{"gpg.openpgp.program", "gpg"},
	{"gpg.x509.program", "gpgsm"},
	{"gpg.ssh.program", "ssh-keygen"},
	{"safe.bareRepository", "explicit"},
}
