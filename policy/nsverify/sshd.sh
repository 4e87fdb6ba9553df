#!/bin/bash
# sshd.sh SEED OUT CONFIG — run an OpenSSH sshd over a copy-on-write view of
# this machine until stdin closes, then report what changed. remote.go
# starts this script as root in fresh mount, network, IPC and UTS
# namespaces, as sandbox.go starts ns.sh; nothing it mounts is seen
# outside, and everything goes when it exits.
#
# The root is built as ns.sh builds it: SEED over this machine's root file
# system, read-only, under a writable upper layer on a tmpfs. sshd runs
# chrooted in it, with all its capabilities (the sandbox under test,
# bubblewrap, needs them to build its own namespaces), in a PID namespace
# whose init is strace: every process of every session, sandboxed or not,
# is traced for connects and sends, and none outlives the run. The network
# namespace has only a loopback; remote.go forwards a port of this
# machine's loopback to sshd's.
#
# After stdin closes (every session has ended), sshd is stopped with
# SIGTERM, which ends strace and the PID namespace, and the upper layer is
# compared with the lower layers alone: every path any session changed,
# by any system call, is in it.
#
# Output on stdout, NUL-separated records (report.go parses them):
#   exit STATUS | changed PATH BEFORE AFTER | copied PATH
# sshd's log goes to stderr; remote.go waits there for "Server listening".
set -eu
seed=$1 out=$2 config=$3

for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then
		eval "exec $fd>&-"
	fi
done

calls=connect,sendto,sendmsg,sendmmsg

mount --make-rprivate /
t=$out/mnt
mount -t tmpfs -o size=512m,mode=0700 opsbot-verify "$t"
cp -a "$seed" "$t/seed"
mkdir "$t/upper" "$t/work" "$t/root" "$t/before"
layers="lowerdir=$t/seed:/"
mount -t overlay -o "ro,$layers" opsbot-before "$t/before"
mount -t overlay -o "nosuid,nodev,$layers,upperdir=$t/upper,workdir=$t/work" opsbot-root "$t/root"
r=$t/root
for d in null zero full random urandom tty; do
	mount --bind "/dev/$d" "$r/dev/$d"
done
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$r/sys"
ip link set lo up

setpriv --pdeathsig KILL unshare --pid --fork --kill-child --mount \
	/bin/sh -c 'mount -t proc -o ro,nosuid,nodev,noexec proc "$1/proc" && shift && exec "$@"' sh "$r" \
	strace -f --seccomp-bpf -qq -v -s 0 -e signal=none -e trace="$calls" -o "$out/trace" \
	chroot "$r" /usr/sbin/sshd -D -e -f "$config" </dev/null >/dev/null &
ns=$!

set +e
read -r _
# sshd's listener is the only child of strace (the only child of unshare):
# SIGTERM ends it; strace then exits once every session process has, with
# its log complete, and the kernel ends what is left in the PID namespace.
for tracer in $(cat "/proc/$ns/task/$ns/children"); do
	for listener in $(cat "/proc/$tracer/task/$tracer/children"); do
		kill -TERM "$listener"
	done
done
wait "$ns"
status=$?
set -e
printf 'exit\0%s\0' "$status"

state() {
	if [ ! -e "$1" ] && [ ! -L "$1" ]; then
		printf absent
		return
	fi
	local s
	s=$(stat -c '%F %a %u:%g %t:%T' -- "$1")
	case $s in
	'regular file'* | 'regular empty file'*) s="$s sha256:$(sha256sum <"$1" | cut -c1-64)" ;;
	'symbolic link'*) s="$s -> $(readlink -- "$1")" ;;
	directory*) s="$s names:$(find "$1" -mindepth 1 -maxdepth 1 -printf '%f\0' | sort -z | tr '\0' /)" ;;
	esac
	printf '%s' "$s"
}

cd "$t/upper"
find . -mindepth 1 -print0 | while IFS= read -r -d '' p; do
	p=${p#./}
	before=$(state "$t/before/$p")
	after=$(state "$r/$p")
	if [ "$before" != "$after" ]; then
		printf 'changed\0%s\0%s\0%s\0' "$p" "$before" "$after"
	elif [ ! -d "$p" ] || [ -L "$p" ]; then
		printf 'copied\0%s\0' "$p"
	fi
done
