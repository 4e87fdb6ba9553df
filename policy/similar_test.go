package policy

import "testing"

// TestSimilar checks each pair both ways: similarity is symmetric.
func TestSimilar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		granted, command string
		want             bool
	}{
		// The same kind of command on another name.
		{"systemctl restart svc-1", "systemctl restart svc-2", true},
		{"systemctl restart svc-1", "systemctl restart svc-1", true},
		{"systemctl restart nginx", "systemctl restart redis", true},
		{"systemctl restart nginx.service", "systemctl restart redis.service", true},
		{"systemctl restart --no-block svc-1", "systemctl restart --no-block svc-9", true},
		{"kubectl rollout restart deployment/api", "kubectl rollout restart deployment/web", true},
		{"kubectl delete pod api-7f9c", "kubectl delete pod web-1a2b", true},
		{"docker restart web-1", "docker restart web-2", true},
		{"docker compose restart api", "docker compose restart web", true},
		{"journalctl -u svc-1 --since=1h", "journalctl -u svc-2 --since=30m", true},
		{"journalctl -n 50 -u svc-1", "journalctl -n 500 -u svc-3", true},
		{"kill 1234", "kill 5678", true},
		{"rm /var/log/app/old-1.log", "rm /var/log/app/old-2.log", true},
		{"truncate -s 0 /var/log/app/a.log", "truncate -s 0 /var/log/app/b.log", true},
		{"ping -c 3 10.0.0.1", "ping -c 3 10.0.0.2", true},
		{"dig db1.prod.example.com", "dig db2.prod.example.com", true},
		{"systemctl restart 'svc-1'", "systemctl restart \"svc-2\"", true},
		{"systemctl restart svc-1 | cat", "systemctl restart svc-2 | cat", true},
		{"restart-app svc-1", "restart-app svc-2", true},
		{"systemctl restart svc-1 # first", "systemctl restart svc-2", true},

		// Another subcommand, option set or class.
		{"systemctl restart svc-1", "systemctl stop svc-1", false},
		{"systemctl restart svc-1", "systemctl disable svc-1", false},
		{"systemctl restart svc-1", "systemctl restart svc-1 svc-2", false},
		{"systemctl restart svc-1", "systemctl restart --force svc-1", false},
		{"systemctl restart --no-block svc-1", "systemctl restart --force svc-1", false},
		{"systemctl restart svc-1", "systemctl restart /etc/passwd", false},
		{"systemctl restart svc-1", "systemctl restart 42", false},
		{"systemctl restart nginx.service", "systemctl restart nginx.socket", false},
		{"kubectl rollout restart deployment/api", "kubectl rollout undo deployment/api", false},
		{"kubectl rollout restart deployment/api", "kubectl rollout restart daemonset/api", false},
		{"kubectl delete pod api-1", "kubectl delete deployment api-1", false},
		{"kubectl -n prod delete pod api-1", "kubectl -n kube-system delete pod api-1", false},
		{"docker compose restart api", "docker compose down api", false},
		{"journalctl -u svc-1 --since=1h", "journalctl -u svc-1 --since=yesterday", false},
		{"kill 1234", "kill -9 1234", false},
		{"kill -15 1234", "kill -9 1234", false},
		{"rm /var/log/app/old-1.log", "rm /etc/shadow", false},
		{"rm /var/log/app/old-1.log", "rm /var/log/app/../../../etc/shadow", false},
		{"rm /var/log/app/old-1.log", "rm /var/log/app/sub/x.log", false},
		{"rm /var/log/app/old-1.log", "rm -rf /var/log/app/old-2.log", false},
		{"rm /var/log/app/old-1.log", "rm /var/log/app/..", false},
		{"ping -c 3 10.0.0.1", "ping -c 3 evil.example.org", false},
		{"dig db1.prod.example.com", "dig db1.prod.example.com.evil.io", false},
		{"restart-app svc-1", "restart-app stop", false},
		{"service nginx restart", "service nginx stop", false},
		{"systemctl restart svc-1 | cat", "systemctl restart svc-2 | tee /tmp/x", false},
		{"systemctl restart svc-1 | cat", "systemctl restart svc-2", false},

		// Evasions: more than one command, computed words, redirections,
		// environment, another program through a path, wrappers, globs,
		// quoting that changes the word.
		{"systemctl restart svc-1", "systemctl restart svc-2; rm -rf /", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 && rm -rf /", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 || reboot", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 &", false},
		{"systemctl restart svc-1", "! systemctl restart svc-2", false},
		{"systemctl restart svc-1", "systemctl restart $(cat /tmp/units)", false},
		{"systemctl restart svc-1", "systemctl restart `id -un`", false},
		{"systemctl restart svc-1", "systemctl restart svc-$N", false},
		{"systemctl restart svc-1", "systemctl restart svc-{1,2,3}", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 > /etc/cron.d/x", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 2>/tmp/err", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 <<EOF\nx\nEOF", false},
		{"systemctl restart svc-1", "SYSTEMD_LOG_LEVEL=debug systemctl restart svc-2", false},
		{"systemctl restart svc-1", "LD_PRELOAD=/tmp/x.so systemctl restart svc-2", false},
		{"systemctl restart svc-1", "/tmp/systemctl restart svc-2", false},
		{"systemctl restart svc-1", "/usr/bin/systemctl restart svc-2", false},
		{"systemctl restart svc-1", "./systemctl restart svc-2", false},
		{"systemctl restart svc-1", "command systemctl restart svc-2", false},
		{"systemctl restart svc-1", "env systemctl restart svc-2", false},
		{"systemctl restart svc-1", "sudo systemctl restart svc-2", false},
		{"systemctl restart svc-1", "exec systemctl restart svc-2", false},
		{"systemctl restart svc-1", "systemctl restart svc-*", false},
		{"systemctl restart svc-1", "systemctl restart 'svc 2'", false},
		{"systemctl restart svc-1", "systemctl restart '--force'", false},
		{"systemctl restart svc-1", "systemctl 'restart' -- svc-2", false},
		{"systemctl restart svc-1", "$'systemctl' restart svc-2", true}, // $'…' without escapes is plain quoting
		{"systemctl restart svc-1", "$'sys\\x74emctl' restart svc-2", false},
		{"systemctl restart svc-1", "systemctl restart $'svc-\\x32'", false},
		{"systemctl restart svc-1", "sys\"temctl\" restart svc-2", true}, // the same word after quote removal
		{"systemctl restart svc-1", "systemctl restart <(rm -rf /)", false},
		{"systemctl restart svc-1", "(systemctl restart svc-2)", false},
		{"systemctl restart svc-1", "{ systemctl restart svc-2; }", false},
		{"systemctl restart svc-1", "if true; then systemctl restart svc-2; fi", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 |& cat", false},
		{"systemctl restart svc-1", "systemctl restart svc-2 'unclosed", false},
		{"sudo systemctl restart svc-1", "sudo systemctl restart svc-2", false},
		{"bash -c 'systemctl restart svc-1'", "bash -c 'systemctl restart svc-2'", false},
		{"python3 fix.py svc-1", "python3 fix.py svc-2", false},
		{"xargs systemctl restart", "xargs systemctl stop", false},
		{"sed -i s/a/b/ /etc/app/one.conf", "sed -i s/a/b/ /etc/app/two.conf", false},
		{"", "systemctl restart svc-2", false},
		{"systemctl restart svc-1", "", false},
	} {
		for _, p := range [][2]string{{tc.granted, tc.command}, {tc.command, tc.granted}} {
			if got := Similar(p[0], p[1]); got != tc.want {
				t.Errorf("Similar(%q, %q) = %v, want %v", p[0], p[1], got, tc.want)
			}
		}
	}
}

// TestSimilarToItself: a command the parser reads fully is similar to
// itself; one with computed words is similar only to the same text.
func TestSimilarToItself(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"systemctl restart svc-1", "systemctl restart $(cat units)", "rm /var/log/*.gz"} {
		if !Similar(c, c) {
			t.Errorf("Similar(%q, itself) = false", c)
		}
	}
	if Similar("rm /var/log/*.gz", "rm /var/log/*.log") {
		t.Error("two globs were similar")
	}
}
