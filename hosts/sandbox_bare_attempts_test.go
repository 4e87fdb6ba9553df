package hosts_test

// bareSecretAttempts are commands of the class a classifier miss lets
// through, each reading the bare-name secrets of bareSecretTree(dir) by
// absolute paths (so they run the same in any working directory): a
// recursive grep, paths found at run time, find -exec, tar, awk over a
// tree, cp to stdout, less, head on a glob, symlinks, xargs, nested
// shells, a tree named by a variable, cd and grep of ".". The sandbox
// must let no marker m out of any.
func bareSecretAttempts(m, dir string) []string {
	app := dir + "/app"
	return []string{
		"grep -r " + m + " " + app, "grep -ri " + m + " " + dir, "grep -rh . " + app,
		"cat $(find " + app + " -type f)", "cat $(find " + dir + " -iname '*.key' -o -name '.env*' -o -iname '*.pem')",
		"find " + app + " -type f -exec cat {} \\;", "find " + dir + " -name '*' -exec head -c 200 {} +",
		"tar cf - " + app + " | tar xOf -", "tar c -C " + dir + " app | strings", "tar -chf - " + app + " | tar -xOf -",
		"awk 1 " + app + "/*/* " + app + "/.env", "find " + app + " -type f | xargs awk '{print FILENAME, $0}'",
		"cp -r " + app + "/config/server.key " + app + "/.env /dev/stdout", "cp " + app + "/tls/site.PEM /dev/stdout",
		"less " + app + "/config/server.key", "less -f " + app + "/config/.env.production",
		"head " + app + "/*/*", "head -n 5 " + app + "/.e* " + app + "/tls/*", "tail -n +1 " + app + "/sub/*",
		"cat " + app + "/innocent", "cat " + app + "/linked/vault/*", "grep -R " + m + " " + app + "/linked/",
		"find " + app + " -print0 | xargs -0 cat", "ls " + app + "/config/* | xargs cat", "echo " + app + "/.env | xargs cat",
		"sh -c 'cat " + app + "/config/*'", "bash -c \"sh -c 'grep -r " + m + " " + app + "'\"",
		"d=" + app + "; grep -r " + m + " $d", "d=" + dir + "; cat $d/app/config/* $d/app/.env", "export T=" + app + "; sh -c 'cat $T/sub/*'",
		"cd " + app + " && grep -r . .", "cd " + dir + " && grep -rl . . | xargs cat", "cd " + app + "/config && cat .env.production server.key",
		"while read -r f; do cat \"$f\"; done < <(find " + app + " -type f)", "for f in " + app + "/*/*; do cat \"$f\"; done",
	}
}

// cwdSecretAttempts are commands of the same class run in the tree of
// bareSecretTree (the working directory), reading it by no path or by
// relative ones: the scan covers the working directory only when a
// command's words may read it, and each of these must be seen so.
func cwdSecretAttempts(m string) []string {
	return []string{
		"grep -r " + m, "grep -rl -A 1 -e " + m + " | xargs cat", "echo | xargs grep -r " + m,
		"sh -c 'grep -R " + m + "'", "bash -c \"sh -c 'cat */*/*'\"", "find -type f -exec cat {} +",
		"cat $(find -type f)", "du -a | cut -f2 | xargs cat 2>/dev/null", "ls -R | grep -v : | xargs cat 2>/dev/null",
		"cat $(echo */*/*)", "for f in app/*/* app/.env; do cat \"$f\"; done", "cd app/config && cat * .env*",
		"printf '%s\\n' app/config/server.key app/.env | while read -r f; do cat \"$f\"; done",
		"find . -name '*.key' | xargs cat", "tar cf - . | tar xOf -", "env grep -r " + m, "nice -n 5 grep -R " + m,
	}
}
