# warmchat times warm fan-out rounds of the real binary: `opsbot chat` on a fleet config,
# `run group:fleet uptime` sent rounds+1 times in one process; the first round is cold.
# Usage: python3 hosts/bench/warmchat.py BIN CONFIG ROUNDS (docs/BENCHMARKS.md).
import subprocess, sys, time, tempfile, statistics
binary, cfg, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = tempfile.mkdtemp()
p = subprocess.Popen([binary, "chat", "--config", cfg, "--data-dir", d], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
took = []
for i in range(rounds + 1):
    start = time.monotonic()
    p.stdin.write("run group:fleet uptime\n"); p.stdin.flush()
    for line in p.stdout:
        if "uptime on group:fleet:" in line and "hosts" in line and "·" in line and ("all exit 0" in line or "exit" in line):
            break
    t = time.monotonic() - start
    print(("cold" if i == 0 else "warm") + " round: %.2f s  (%s)" % (t, line.strip()[:80]), flush=True)
    if i > 0: took.append(t)
p.stdin.close(); p.wait()
print("opsbot chat warm, median of %d rounds: %.2f s" % (rounds, statistics.median(took)))
