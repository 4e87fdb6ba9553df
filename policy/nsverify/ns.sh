#!/bin/bash
# ns.sh SEED OUT DEADLINE COMMAND — run COMMAND once, the way hosts.Local
# runs it (bash -c), and report what it changed. sandbox.go starts this
# script as root in fresh mount, network, IPC and UTS namespaces; nothing it
# mounts is seen outside, and everything goes when it exits.
#
# The command's root is an overlay: SEED (seed files, opaque directories and
# whiteouts, built by seed.go) over this machine's root file system, both
# read-only, with a writable upper layer on a tmpfs. Every write, delete,
# chmod or rename lands in that upper layer, so after the run the upper layer
# lists every path the command touched; each is compared with the same path
# before the run (an overlay of the lower layers alone).
#
# The command runs under strace, stopping only at the traced calls
# (--seccomp-bpf; connects, sends, privileged calls: trace.go
# reads the log), chrooted, as root without the capabilities that reach
# beyond these namespaces (mount, chroot, mknod, time, modules, ptrace,
# raw I/O…), in its own PID namespace whose init is strace: when the run
# ends or its deadline passes, every process it started is gone before the
# comparison starts.
#
# Output on stdout, NUL-separated records (report.go parses them):
#   exit STATUS | net BEFORE AFTER | changed PATH BEFORE AFTER | copied PATH
set -eu
seed=$1 out=$2 deadline=$3 cmd=$4

# Close what the caller leaked past exec (a fuzz worker's pipes to its
# coordinator are descriptors 3 and 4): the command gets stdin, stdout and
# stderr only. 255 is bash's own handle on this script.
for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then
		eval "exec $fd>&-"
	fi
done

# Capabilities the command keeps: file access and ownership inside its
# overlay, its own processes, and its own network namespace. The rest
# would reach the real machine: sys_admin, sys_time, sys_module, sys_boot,
# syslog, sys_rawio and mknod directly; sys_chroot and dac_read_search
# (open_by_handle_at) by leaving the chroot, which is otherwise sealed: no
# descriptor of the command opens a directory outside it, strace (the only
# process outside) cannot be ptraced or read through /proc by a process
# with fewer capabilities, and a chrooted process may not create a user
# namespace.
keep=chown,dac_override,fowner,fsetid,kill,setgid,setuid,setpcap,net_bind_service,net_admin,net_raw,audit_write,setfcap
bounding=-all,+${keep//,/,+}

# Network attempts and calls that change the machine itself.
calls=connect,sendto,sendmsg,sendmmsg
calls=$calls,mount,umount2,pivot_root,fsopen,fsmount,move_mount,open_tree,swapon,swapoff,reboot
calls=$calls,init_module,finit_module,delete_module,kexec_load,kexec_file_load
calls=$calls,clock_settime,settimeofday,clock_adjtime,sethostname,setdomainname,acct

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

# The namespace starts with lo down; up, as on a real host, a connect to
# 127.0.0.1 is refused rather than unreachable.
ip link set lo up
netstate() {
	ip -d -o link
	ip -o addr
	ip route show table all
	ip -6 route show table all
	ip rule
	ip -6 rule
	ip neigh
	ip maddr
}
netBefore=$(netstate 2>&1)

# The run. Its PID namespace's init is strace (the inner sh execs it),
# which mounts /proc read-only for it first; when strace exits, the kernel
# kills what is left and waits for it before unshare returns.
set +e
(
	ulimit -f 262144 # no file past 256 MiB
	exec timeout -k 5 "$deadline" unshare --pid --fork --kill-child --mount \
		/bin/sh -c 'mount -t proc -o ro,nosuid,nodev,noexec proc "$1/proc" && shift && exec "$@"' sh "$r" \
		strace -f --seccomp-bpf -qq -v -s 0 -e signal=none -e trace="$calls" -o "$out/trace" \
		chroot "$r" /usr/bin/env -i -C /root HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
		/usr/bin/setpriv --bounding-set="$bounding" -- /bin/bash -c "$cmd" \
		</dev/null >"$out/stdout" 2>"$out/stderr"
)
status=$?
set -e
printf 'exit\0%s\0' "$status"

netAfter=$(netstate 2>&1)
[ "$netBefore" = "$netAfter" ] || printf 'net\0%s\0%s\0' "$netBefore" "$netAfter"

# state prints what the run may not change about a path: existence, type,
# mode, owner, and content (a file's hash, a link's target, a directory's
# names, each followed by a slash).
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
