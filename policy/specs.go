package policy

// The option specs of the programs the allowlist checks, each in its
// parser's family and listing every option the policy accepts: an option
// missing here makes the command need approval, never a guess. Specs of
// tools installed where the tests run are checked against the tool's own
// --help (TestSpecsMatchInstalledHelp).

var (
	sortSpec = optSpec{short: "bcCdfghik:mMno:rRsS:t:T:uVy:z", long: []string{"ignore-leading-blanks", "dictionary-order", "ignore-case",
		"general-numeric-sort", "ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "random-source=",
		"reverse", "sort=", "version-sort", "batch-size=", "check=?", "compress-program=", "debug", "files0-from=", "key=", "merge",
		"output=", "stable", "buffer-size=", "field-separator=", "temporary-directory=", "parallel=", "unique", "zero-terminated", "help", "version"}}
	uniqSpec = optSpec{short: "0123456789cdDf:is:uw:z", long: []string{"count", "repeated", "all-repeated=?", "group=?", "skip-fields=",
		"ignore-case", "skip-chars=", "unique", "zero-terminated", "check-chars=", "help", "version"}}
	treeSpec = optSpec{short: "adlfxL:RP:I:o:iqNQpugshDFvtcUrCAJSnXH:T:", long: []string{"noreport", "charset=", "filelimit=", "timefmt=",
		"du", "si", "prune", "sort=", "dirsfirst", "filesfirst", "matchdirs", "ignore-case", "fromfile", "gitignore", "info", "infofile=",
		"noreport", "hyperlink", "scheme=", "authority=", "opt-toggle", "metafirst", "version", "help"}}
	fileSpec = optSpec{short: "bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0", long: []string{"help", "version", "magic-file=", "uncompress",
		"uncompress-noreport", "brief", "checking-printout", "exclude=", "exclude-quiet=", "files-from=", "separator=", "mime",
		"mime-encoding", "apple", "extension", "mime-type", "keep-going", "list", "dereference", "no-dereference", "no-buffer", "no-pad",
		"print0", "preserve-date", "parameter=", "raw", "special-files", "no-sandbox", "compile", "debug"}}
	lastlogSpec = optSpec{short: "b:ChR:St:u:", long: []string{"before=", "clear", "help", "root=", "set", "time=", "user="}}
	xxdSpec     = optSpec{short: "abC:c:Eeg:hil:n:o:prs:duvR:", long: nil, firstOperandEnds: true}
	readSpec    = optSpec{short: "a:d:ei:n:N:p:rst:u:"}
	topSpec     = optSpec{short: "bcd:E:e:Hin:Oo:p:SsU:u:w::1hV", long: []string{"batch-mode", "cmdline-toggle", "delay=", "scale-summary-mem=",
		"scale-task-mem=", "threads-show", "idle-toggle", "iterations=", "list-fields", "sort-override=", "pid=", "accum-time-toggle",
		"secure-mode", "filter-any-user=", "filter-only-euser=", "width=?", "single-cpu-toggle", "help", "version"}}
	dateSpec = optSpec{short: "d:f:I::r:Rs:u", long: []string{"date=", "debug", "file=", "iso-8601=?", "resolution", "rfc-email", "rfc-822",
		"rfc-2822", "rfc-3339=", "reference=", "set=", "utc", "universal", "help", "version"}}
	hostnameSpec = optSpec{short: "aAbdfF:iIsyvhV", long: []string{"alias", "all-fqdns", "boot", "domain", "fqdn", "long", "file=", "ip-address",
		"all-ip-addresses", "short", "yp", "nis", "verbose", "help", "version"}}
	dmesgSpec = optSpec{short: "CcDdEeF:f:HhJkL::l:n:PprSs:TtuVwWx", long: []string{"clear", "read-clear", "console-off", "console-on", "file=",
		"facility=", "human", "json", "kernel", "color=?", "level=", "console-level=", "nopager", "force-prefix", "raw", "noescape", "syslog",
		"buffer-size=", "userspace", "follow", "follow-new", "decode", "show-delta", "reltime", "ctime", "notime", "time-format=", "since=",
		"until=", "help", "version"}}
	sysctlSpec = optSpec{short: "aAbdeNnp::fqr:woxXhV", long: []string{"all", "deprecated", "dry-run", "binary", "ignore", "names", "values",
		"load=?", "system", "pattern=", "quiet", "write", "help", "version"}}
	pingSpec = optSpec{short: "46aAbBc:dDe:fF:hi:I:l:LmM:nOp:qQ:rRs:S:t:T:UvVw:W:", long: nil}
	mtrSpec  = optSpec{short: "hvF:46I:a:f:m:U:E:ui:c:s:B:G:Q:Z:M:rwCxpljztnbyeo:TSP:L:", long: []string{"help", "version", "filename=",
		"inet", "inet6", "interface=", "address=", "first-ttl=", "max-ttl=", "max-unknown=", "udp", "tcp", "sctp", "port=", "localport=",
		"timeout=", "interval=", "report-cycles=", "psize=", "bitpattern=", "gracetime=", "tos=", "mpls", "report", "report-wide",
		"xml", "gtk", "curses", "displaymode=", "split", "raw", "csv", "json", "no-dns", "show-ips", "order=", "ipinfo=", "aslookup",
		"mark="}}
	ssSpec = optSpec{short: "hVnraloempTisbEZzN:460tMSudwxf:KHOA:D:F:", long: []string{"help", "version", "numeric", "resolve", "all",
		"listening", "options", "extended", "memory", "processes", "threads", "info", "tipcinfo", "summary", "tos", "cgroup", "bpf",
		"events", "context", "contexts", "net=", "ipv4", "ipv6", "packet", "tcp", "mptcp", "sctp", "udp", "dccp", "raw", "unix", "tipc",
		"vsock", "xdp", "family=", "kill", "no-header", "oneline", "inet-sockopt", "query=", "socket=", "diag=", "filter="}}
	journalctlSpec = optSpec{short: "hefo:aln::qmb::kD:p:g:c:S:U:t:T:u:NF:xrM:i:", long: []string{"system", "user", "machine=", "merge",
		"directory=", "file=", "root=", "image=", "image-policy=", "namespace=", "since=", "until=", "cursor=", "after-cursor=",
		"cursor-file=", "boot=?", "unit=", "user-unit=", "identifier=", "exclude-identifier=", "priority=", "facility=", "grep=",
		"case-sensitive=?", "dmesg", "output=", "output-fields=", "lines=?", "reverse", "show-cursor", "utc", "catalog", "no-hostname",
		"no-full", "full", "all", "follow", "no-tail", "quiet", "no-pager", "pager-end", "interval=", "verify-key=", "force", "help",
		"version", "fields", "field=", "list-boots", "list-namespaces", "disk-usage", "vacuum-size=", "vacuum-files=", "vacuum-time=",
		"verify", "sync", "relinquish-var", "smart-relinquish-var", "flush", "rotate", "header", "list-catalog", "dump-catalog",
		"update-catalog", "setup-keys", "new-id128", "this-boot"}}
	systemctlSpec = optSpec{short: "ht:p:P:alqfs:H:M:n:o:iTr", long: []string{"help", "version", "system", "user", "global", "host=",
		"machine=", "type=", "state=", "failed", "property=", "all", "full", "recursive", "reverse", "after", "before", "with-dependencies",
		"job-mode=", "fail", "irreversible", "ignore-dependencies", "ignore-inhibitors", "show-transaction", "show-types", "value",
		"check-inhibitors=", "kill-whom=", "kill-value=", "signal=", "what=", "now", "dry-run", "quiet", "wait", "no-block", "no-wall",
		"no-reload", "legend=", "no-legend", "no-pager", "no-ask-password", "runtime", "force", "preset-mode=", "root=", "image=",
		"lines=", "output=", "firmware-setup", "boot-loader-menu=", "boot-loader-entry=", "reboot-argument=", "plain", "timestamp=",
		"read-only", "mkdir", "marked", "message="}}
	loginctlSpec = optSpec{short: "hp:P:als:H:M:n:o:", long: []string{"help", "version", "no-pager", "no-legend", "no-ask-password", "host=",
		"machine=", "property=", "all", "value", "full", "kill-whom=", "signal=", "lines=", "output="}}
	timedatectlSpec = optSpec{short: "hH:M:p:a", long: []string{"help", "version", "no-pager", "no-ask-password", "host=", "machine=",
		"adjust-system-clock", "monitor", "property=", "all", "value"}}
	hostnamectlSpec = optSpec{short: "hH:M:", long: []string{"help", "version", "no-ask-password", "host=", "machine=", "transient", "static",
		"pretty", "json="}}
	crontabSpec  = optSpec{short: "u:lerisnc", long: nil}
	iptablesSpec = optSpec{short: "t:LSnvxw::W:46", long: []string{"table=", "list=?", "list-rules=?", "numeric", "verbose", "exact", "line-numbers", "wait=?", "wait-interval=", "ipv4", "ipv6"}}
	ethtoolSpec  = optSpec{short: "hiSkgacldmTPIJ", long: []string{"driver", "statistics", "show-features", "show-offload", "show-ring", "show-pause", "show-coalesce", "show-channels", "module-info", "dump-module-eeprom", "show-time-stamping", "show-permaddr", "json", "debug=", "include-statistics", "help", "version"}}
	mountSpec    = optSpec{short: "lt:hV", long: []string{"types=", "show-labels", "help", "version"}}
	dpkgSpec     = optSpec{short: "lLsSpC", long: []string{"list", "listfiles", "status", "search", "print-avail", "get-selections", "print-architecture", "print-foreign-architectures", "version", "help", "audit", "verify", "compare-versions", "no-pager"}}
	chronycSpec  = optSpec{short: "46acdemnNh:p:f:v"}
	tloadSpec    = optSpec{short: "d:hs:V", long: []string{"delay=", "help", "scale=", "version"}}
	xargsSpec    = optSpec{short: "0a:E:e::i::I:l::L:n:oprs:tP:xd:", long: []string{"null", "arg-file=", "delimiter=", "eof=?", "replace=?", "max-lines=?", "max-args=", "open-tty", "max-procs=", "interactive", "process-slot-var=", "no-run-if-empty", "max-chars=", "show-limits", "verbose", "exit", "help", "version"}, stopAtOperand: true}
	watchSpec    = optSpec{short: "bcCd::eEgn:pq:rtwxhv", long: []string{"beep", "color", "no-color", "differences=?", "errexit", "chgexit", "equexit=", "interval=", "precise", "no-rerun", "no-title", "no-wrap", "no-linewrap", "exec", "shotsdir=", "help", "version"}, stopAtOperand: true}
	sedSpec      = optSpec{short: "bnrsuEzi::l:e:f:", long: []string{"binary", "quiet", "silent", "debug", "expression=", "file=", "follow-symlinks", "in-place=?", "line-length=", "posix", "regexp-extended", "separate", "sandbox", "unbuffered", "null-data", "zero-terminated", "help", "version"}}
	ncSpec       = optSpec{short: "46bCDdFhklNnrStUuvZzc:e:I:i:M:m:O:P:p:q:s:T:V:W:w:X:x:", long: nil}
	// ncat's getopt_long: the short options of nmap's ncat.
	ncatSpec = optSpec{short: "46UCc:e:g:G:i:I:klm:no:p:s:tuvw:xzh", long: []string{"crlf", "sh-exec=", "exec=", "lua-exec=",
		"max-conns=", "help", "delay=", "listen", "keep-open", "source=", "source-port=", "idle-timeout=", "recv-only", "send-only",
		"nodns", "output=", "hex-dump=", "append-output", "wait=", "udp", "sctp", "unixsock", "vsock", "version", "verbose",
		"no-shutdown", "zero-io", "telnet", "broker", "chat", "allow=", "allowfile=", "deny=", "denyfile=", "proxy=", "proxy-type=",
		"proxy-auth=", "proxy-dns=", "ssl", "ssl-cert=", "ssl-key=", "ssl-verify", "ssl-trustfile=", "ssl-ciphers=", "ssl-servername=",
		"ssl-alpn=", "nsock-engine="}}
	redisSpec = optSpec{family: wholeWord, long: []string{"-h=", "-p=", "-s=", "-a=", "-u=", "-r=", "-i=", "-n=", "-t=", "-d=", "-D=",
		"-2", "-3", "-x", "-X=", "-e", "-c", "-v", "--user=", "--pass=", "--askpass", "--raw", "--no-raw", "--quoted-input", "--csv",
		"--json", "--quoted-json", "--show-pushes", "--stat", "--latency", "--latency-history", "--latency-dist", "--lru-test=",
		"--replica", "--slave", "--rdb=", "--functions-rdb=", "--pipe", "--pipe-timeout=", "--bigkeys", "--memkeys",
		"--memkeys-samples=", "--hotkeys", "--scan", "--pattern=", "--quoted-pattern=", "--count=", "--intrinsic-latency=", "--eval=",
		"--ldb", "--ldb-sync-mode", "--cluster", "--tls", "--sni=", "--cacert=", "--cacertdir=", "--insecure", "--tls-ciphers=",
		"--tls-ciphersuites=", "--cert=", "--key=", "--verbose", "--no-auth-warning", "--help", "--version"}}
	curlSpec = optSpec{short: "012346aA:b:Bc:C:d:D:e:E:fF:gGhH:iIjJkK:lLm:MnNo:OpP:qQ:r:RsSt:T:u:U:vVw:x:X:y:Y:z:Z#", long: curlLong}
	awkSpec  = optSpec{short: "F:v:f:E:i:l:W:bcCd::D::e:gh:L::MnNo::Op::PrsStVY", long: []string{"field-separator=", "assign=", "file=",
		"exec=", "include=", "load=", "source=", "characters-as-bytes", "traditional", "copyright", "dump-variables=?", "debug=?",
		"gen-pot", "help", "lint=?", "bignum", "use-lc-numeric", "non-decimal-data", "pretty-print=?", "optimize", "profile=?",
		"posix", "re-interval", "no-optimize", "sandbox", "lint-old", "version", "csv"}}
	aptSpec = optSpec{short: "o:c:t:qayhv", long: []string{"installed", "upgradable", "all-versions", "manual-installed", "full",
		"names-only", "option=", "config-file=", "target-release=", "quiet", "no-all-versions", "verbose", "help", "version", "recurse",
		"important", "no-pre-depends", "no-depends", "no-recommends", "no-suggests", "no-conflicts", "no-breaks", "no-replaces",
		"no-enhances", "color", "no-color", "generate", "no-generate"}}
	nginxSpec = optSpec{short: "?hvVtTqs:p:e:c:g:"}
	rpmSpec   = optSpec{short: "qVaficlsdRpE:D:", long: []string{"query", "verify", "all", "file", "info", "configfiles", "docfiles", "list",
		"state", "requires", "provides", "changelog", "scripts", "triggers", "whatprovides", "whatrequires", "queryformat=", "qf=",
		"version", "package", "last", "nosignature", "nodigest", "eval=", "define=", "undefine=", "macros=", "load=", "pipe=",
		"rcfile=", "dbpath=", "root=", "setperms", "setugids", "restore", "setcaps", "import", "rebuilddb", "initdb", "quiet", "verbose"}}
	tarSpec = optSpec{short: "Ab:BcC:df:F:g:GhH:iI:jJkK:lL:mMnN:oOpPrRsStT:uUvV:wWxX:zZ", long: tarLong}
)

// curlLong are curl's long options (curl --help all); a value-taking one
// is followed by "=".
var curlLong = []string{"abstract-unix-socket=", "alt-svc=", "anyauth", "append", "aws-sigv4=", "basic", "ca-native", "cacert=", "capath=",
	"cert=", "cert-status", "cert-type=", "ciphers=", "compressed", "compressed-ssh", "config=", "connect-timeout=", "connect-to=",
	"continue-at=", "cookie=", "cookie-jar=", "create-dirs", "create-file-mode=", "crlf", "crlfile=", "curves=", "data=", "data-ascii=",
	"data-binary=", "data-raw=", "data-urlencode=", "delegation=", "digest", "disable", "disable-eprt", "disable-epsv",
	"disallow-username-in-url", "dns-interface=", "dns-ipv4-addr=", "dns-ipv6-addr=", "dns-servers=", "doh-cert-status", "doh-insecure",
	"doh-url=", "dump-header=", "egd-file=", "engine=", "etag-compare=", "etag-save=", "expect100-timeout=", "fail", "fail-early",
	"fail-with-body", "false-start", "form=", "form-escape", "form-string=", "ftp-account=", "ftp-alternative-to-user=",
	"ftp-create-dirs", "ftp-method=", "ftp-pasv", "ftp-port=", "ftp-pret", "ftp-skip-pasv-ip", "ftp-ssl-ccc", "ftp-ssl-ccc-mode=",
	"ftp-ssl-control", "get", "globoff", "happy-eyeballs-timeout-ms=", "haproxy-clientip=", "haproxy-protocol", "head", "header=",
	"help", "hostpubmd5=", "hostpubsha256=", "hsts=", "http0.9", "http1.0", "http1.1", "http2", "http2-prior-knowledge", "http3",
	"http3-only", "ignore-content-length", "include", "insecure", "interface=", "ipfs-gateway=", "ipv4", "ipv6", "json=",
	"junk-session-cookies", "keepalive-time=", "key=", "key-type=", "krb=", "libcurl=", "limit-rate=", "list-only", "local-port=",
	"location", "location-trusted", "login-options=", "mail-auth=", "mail-from=", "mail-rcpt=", "mail-rcpt-allowfails", "manual",
	"max-filesize=", "max-redirs=", "max-time=", "metalink", "negotiate", "netrc", "netrc-file=", "netrc-optional", "next",
	"no-alpn", "no-buffer", "no-clobber", "no-keepalive", "no-npn", "no-progress-meter", "no-sessionid", "noproxy=", "ntlm",
	"ntlm-wb", "oauth2-bearer=", "output=", "output-dir=", "parallel", "parallel-immediate", "parallel-max=", "pass=", "path-as-is",
	"pinnedpubkey=", "post301", "post302", "post303", "preproxy=", "progress-bar", "proto=", "proto-default=", "proto-redir=",
	"proxy=", "proxy-anyauth", "proxy-basic", "proxy-ca-native", "proxy-cacert=", "proxy-capath=", "proxy-cert=", "proxy-cert-type=",
	"proxy-ciphers=", "proxy-crlfile=", "proxy-digest", "proxy-header=", "proxy-http2", "proxy-insecure", "proxy-key=",
	"proxy-key-type=", "proxy-negotiate", "proxy-ntlm", "proxy-pass=", "proxy-pinnedpubkey=", "proxy-service-name=",
	"proxy-ssl-allow-beast", "proxy-ssl-auto-client-cert", "proxy-tls13-ciphers=", "proxy-tlsauthtype=", "proxy-tlspassword=",
	"proxy-tlsuser=", "proxy-tlsv1", "proxy-user=", "proxy1.0=", "proxytunnel", "pubkey=", "quote=", "random-file=", "range=",
	"rate=", "raw", "referer=", "remote-header-name", "remote-name", "remote-name-all", "remote-time", "remove-on-error",
	"request=", "request-target=", "resolve=", "retry=", "retry-all-errors", "retry-connrefused", "retry-delay=", "retry-max-time=",
	"sasl-authzid=", "sasl-ir", "service-name=", "show-error", "show-headers", "silent", "socks4=", "socks4a=", "socks5=",
	"socks5-basic", "socks5-gssapi", "socks5-gssapi-nec", "socks5-gssapi-service=", "socks5-hostname=", "speed-limit=",
	"speed-time=", "ssl", "ssl-allow-beast", "ssl-auto-client-cert", "ssl-no-revoke", "ssl-reqd", "ssl-revoke-best-effort",
	"sslv2", "sslv3", "stderr=", "styled-output", "suppress-connect-headers", "tcp-fastopen", "tcp-nodelay", "telnet-option=",
	"tftp-blksize=", "tftp-no-options", "time-cond=", "tls-max=", "tls13-ciphers=", "tlsauthtype=", "tlspassword=", "tlsuser=",
	"tlsv1", "tlsv1.0", "tlsv1.1", "tlsv1.2", "tlsv1.3", "tr-encoding", "trace=", "trace-ascii=", "trace-config=", "trace-ids",
	"trace-time", "unix-socket=", "upload-file=", "url=", "url-query=", "use-ascii", "user=", "user-agent=", "variable=", "verbose",
	"version", "write-out=", "xattr"}

// tarLong are GNU tar's long options (tar --help).
var tarLong = []string{"catenate", "concatenate", "create", "delete", "diff", "compare", "append", "test-label", "list", "update",
	"extract", "get", "check-device", "listed-incremental=", "incremental", "hole-detection=", "ignore-failed-read", "level=",
	"no-check-device", "no-seek", "seek", "occurrence=?", "sparse-version=", "sparse", "add-file=", "directory=", "exclude=",
	"exclude-backups", "exclude-caches", "exclude-caches-all", "exclude-caches-under", "exclude-ignore=", "exclude-ignore-recursive=",
	"exclude-tag=", "exclude-tag-all=", "exclude-tag-under=", "exclude-vcs", "exclude-vcs-ignores", "no-null", "no-recursion",
	"no-unquote", "no-verbatim-files-from", "null", "verbatim-files-from", "recursion", "files-from=", "unquote", "exclude-from=",
	"anchored", "ignore-case", "no-anchored", "no-ignore-case", "no-wildcards", "no-wildcards-match-slash", "wildcards",
	"wildcards-match-slash", "keep-directory-symlink", "keep-newer-files", "keep-old-files", "no-overwrite-dir", "one-top-level=?",
	"overwrite", "overwrite-dir", "recursive-unlink", "remove-files", "skip-old-files", "unlink-first", "verify",
	"ignore-command-error", "no-ignore-command-error", "to-stdout", "to-command=", "atime-preserve=?", "clamp-mtime",
	"delay-directory-restore", "group=", "group-map=", "mode=", "mtime=", "touch", "no-delay-directory-restore", "no-same-owner",
	"no-same-permissions", "numeric-owner", "owner=", "owner-map=", "preserve-permissions", "same-permissions", "same-owner",
	"sort=", "preserve-order", "same-order", "acls", "no-acls", "no-selinux", "no-xattrs", "selinux", "xattrs", "xattrs-exclude=",
	"xattrs-include=", "force-local", "file=", "info-script=", "new-volume-script=", "tape-length=", "multi-volume",
	"rmt-command=", "rsh-command=", "volno-file=", "blocking-factor=", "read-full-records", "ignore-zeros", "record-size=",
	"format=", "old-archive", "portability", "pax-option=", "posix", "label=", "auto-compress", "use-compress-program=", "bzip2",
	"xz", "lzip", "lzma", "lzop", "no-auto-compress", "zstd", "gzip", "gunzip", "ungzip", "compress", "uncompress", "backup=?",
	"hard-dereference", "dereference", "starting-file=", "newer-mtime=", "newer=", "after-date=", "one-file-system",
	"absolute-names", "suffix=", "strip-components=", "transform=", "xform=", "checkpoint=?", "checkpoint-action=", "full-time",
	"index-file=", "check-links", "no-quote-chars=", "quote-chars=", "quoting-style=", "block-number", "show-defaults",
	"show-omitted-dirs", "show-snapshot-field-ranges", "show-transformed-names", "show-stored-names", "totals=?", "utc", "verbose",
	"warning=", "interactive", "confirmation", "help", "restrict", "usage", "version"}
