#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# stap-vm.sh - run SystemTap's kernel-module runtime (stap -p4 .ko + staprun)
# inside a throw-away QEMU guest, on hosts whose own kernel cannot load modules.
#
# perun's copy of the shared tracing environment's tracing-env/vm/stap-vm.sh
# (same commands and behaviour), used by .ci/run and tests/t5101-kernel-vm.sh:
# its cache defaults to /var/cache/perun-vm, `prepare` installs QEMU when it is
# missing, and the runtime patches come from tools/stap-runtime/ through
# tools/prepare-kernel-runtime.sh, the step perun's users run too.
#
# The guest runs a stock Debian kernel (linux-image-<release>) and sees the
# host's whole filesystem read-only over 9p, so staprun, stapio, the traced
# binaries and their libraries are the host's own files at the same paths.
# Modules are compiled on the host (stap -r <release> -R <patched runtime>).
#
# Usage (as root):
#   stap-vm.sh prepare            download + build everything into the cache, smoke test
#   stap-vm.sh release            print the guest kernel release (for stap -r)
#   stap-vm.sh runtime [--txfix]  print the patched runtime directory (for stap -R)
#   stap-vm.sh env                print STAP_VM_RELEASE=... STAP_VM_RUNTIME=... lines
#   stap-vm.sh stap [--txfix] ARGS...
#                                 run the host's stap with -r <release> -R <runtime> ARGS
#                                 (e.g. stap-vm.sh stap -p4 -m mymod script.stp)
#   stap-vm.sh run [OPTIONS] -- COMMAND [ARGS...]
#                                 boot the guest, run COMMAND in it (as root, in the
#                                 host's root filesystem), print its stdout and
#                                 stderr, exit with its exit status
#   stap-vm.sh status             show what is prepared
#   stap-vm.sh clean              delete the cache (host packages stay installed)
#
# Two runtimes are prepared (both need `stap -R`; see tools/stap-runtime/*/):
#   runtime        stock 4.8 runtime + the build fix and the uprobe filter (no txfix)
#   runtime-txfix  the same + a relay transport fix: with stock 4.8, per-event
#                  output at high rates is mostly lost (see 02-relay-txfix.patch)
#
# run options:
#   --rw DIR        share host DIR read-write at the same path (repeatable).
#                   The current directory is shared read-write by default.
#                   Everything else of the host is visible read-only.
#   --no-cwd        do not share the current directory read-write
#   --cwd DIR       working directory of COMMAND in the guest (default: $PWD)
#   --tmpfs DIR     mount an empty tmpfs at DIR in the guest (repeatable);
#                   /run is always a guest tmpfs, TMPDIR=/run/tmp
#   --env NAME=VAL  set an environment variable for COMMAND (repeatable)
#   --timeout SEC   kill the guest after SEC seconds (default $STAP_VM_TIMEOUT or 900)
#   --mem MB        guest memory (default $STAP_VM_MEM or 1024)
#   --keep          keep the run directory (console log, dmesg, timings)
#   -v, --verbose   print boot/command timings and the guest's kernel log
#
# Exit status of `run`: COMMAND's exit status; 124 if the guest timed out;
# 125 if the VM could not be started or COMMAND could not be started.
#
# Environment: STAP_VM_CACHE (default: /var/cache/perun-vm),
#   STAP_VM_RELEASE (guest kernel release, default: what linux-image-amd64
#   depends on, fixed at the first `prepare`), STAP_VM_TXFIX=1 (make `stap`
#   and `runtime` use runtime-txfix), STAP_VM_ACCEL (tcg|kvm, default tcg),
#   STAP_VM_CPU (default qemu64 for tcg, host for kvm), STAP_VM_SMP (default
#   1), STAP_VM_BOOT (pvh|bzimage, default pvh), STAP_VM_QEMU.
#
# Host changes made by `prepare` (everything else stays in the cache):
#   apt-get install linux-headers-<release> (stap needs /lib/modules/<release>/build)
#   /lib/modules/<release>/build/System.map, generated from the guest's
#   /proc/kallsyms when the headers only carry Debian's one-line stub.

set -uo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
CACHE=${STAP_VM_CACHE:-/var/cache/perun-vm}
PREPARE_RUNTIME=$(dirname "$SELF")/prepare-kernel-runtime.sh
QEMU=${STAP_VM_QEMU:-qemu-system-x86_64}
ACCEL=${STAP_VM_ACCEL:-tcg}
GUEST_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_console netfs fscache 9pnet 9pnet_virtio 9p"
KCMDLINE="console=ttyS0 quiet panic=-1 nokaslr mitigations=off"
PROG=stap-vm

say()  { printf '%s: %s\n' "$PROG" "$*" >&2; }
die()  { printf '%s: ERROR: %s\n' "$PROG" "$*" >&2; exit 125; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (needs apt-get, qemu 9p export of /, module build tree)"; }

need_tools() {
	local t missing=""
	for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
	[ -z "$missing" ] || die "missing host tools:$missing (apt-get install qemu-system-x86 systemtap dpkg-dev ...)"
}

# ---------------------------------------------------------------- release ---
resolve_release() {
	if [ -n "${STAP_VM_RELEASE:-}" ]; then
		KREL=$STAP_VM_RELEASE
	elif [ -s "$CACHE/release" ]; then
		KREL=$(cat "$CACHE/release")
	else
		KREL=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | head -n1)
		[ -n "$KREL" ] || die "cannot resolve the guest kernel: apt-cache knows no linux-image-amd64 (run apt-get update, or set STAP_VM_RELEASE=6.1.0-NN-amd64)"
	fi
	case $KREL in
		[0-9]*.[0-9]*-amd64) ;;
		*) die "unexpected kernel release '$KREL' (want e.g. 6.1.0-56-amd64)";;
	esac
	KDIR=$CACHE/kernel/$KREL
	RUNTIME=$CACHE/runtime
	RUNTIME_TXFIX=$CACHE/runtime-txfix
	BUILD=/lib/modules/$KREL/build
}

require_prepared() {
	resolve_release
	[ -e "$CACHE/prepared-$KREL" ] ||
		die "guest for $KREL is not prepared: run '$SELF prepare' first"
}

# ---------------------------------------------------------------- prepare ---
apt_fetch() {	# apt_fetch PACKAGE -> prints path of the .deb in $CACHE/debs
	local pkg=$1 deb
	mkdir -p "$CACHE/debs"
	deb=$(ls "$CACHE/debs/${pkg}_"*.deb 2>/dev/null | head -n1)
	if [ -z "$deb" ]; then
		say "downloading $pkg"
		(cd "$CACHE/debs" && apt-get download -q "$pkg" 2>&1 | { grep -v '^W: Download is performed unsandboxed' >&2 || true; }) ||
			die "apt-get download $pkg failed (try apt-get update; is $pkg still in the archive?)"
		deb=$(ls "$CACHE/debs/${pkg}_"*.deb 2>/dev/null | head -n1)
		[ -n "$deb" ] || die "apt-get download $pkg produced no .deb"
	fi
	printf '%s\n' "$deb"
}

extract_kernel() {
	local deb tmp m f dep have=1
	for m in $GUEST_MODULES; do [ -s "$KDIR/modules/$m.ko" ] || have=0; done
	[ -s "$KDIR/vmlinuz" ] && [ "$have" = 1 ] && return 0
	deb=$(apt_fetch "linux-image-$KREL") || exit 125
	say "extracting kernel and 9p/virtio modules from $(basename "$deb")"
	tmp=$(mktemp -d "$CACHE/tmp.XXXXXX")
	dpkg-deb -x "$deb" "$tmp" || die "dpkg-deb -x $deb failed"
	rm -rf "$KDIR.new"; mkdir -p "$KDIR.new/modules"
	cp "$tmp/boot/vmlinuz-$KREL" "$KDIR.new/vmlinuz" || die "no boot/vmlinuz-$KREL in $deb"
	cp "$tmp/boot/config-$KREL" "$KDIR.new/config" || die "no boot/config-$KREL in $deb"
	for m in $GUEST_MODULES; do
		f=$(find "$tmp/lib/modules/$KREL/kernel" -name "$m.ko" -o -name "$m.ko.xz" | head -n1)
		[ -n "$f" ] || die "module $m not found in $deb"
		case $f in
			*.xz) xz -dc "$f" > "$KDIR.new/modules/$m.ko" || die "xz -d $f";;
			*)    cp "$f" "$KDIR.new/modules/$m.ko";;
		esac
		# Check that the hard-coded load order covers every dependency.
		dep=$(tr '\0' '\n' < "$KDIR.new/modules/$m.ko" | sed -n 's/^depends=//p' | head -n1)
		for d in ${dep//,/ }; do
			case " $(cd "$KDIR.new/modules" && ls | sed 's/\.ko$//' | tr '\n' ' ') " in
				*" $d "*) ;;
				*) die "module $m depends on $d, which is not loaded before it";;
			esac
		done
	done
	[ -s "$KDIR/vmlinux" ] && mv "$KDIR/vmlinux" "$KDIR.new/vmlinux"
	rm -rf "$tmp" "$KDIR"; mv "$KDIR.new" "$KDIR"
}

# Under TCG, decompressing the xz bzImage costs ~2.5 s per boot.  QEMU can boot
# the uncompressed ELF vmlinux directly through its PVH entry (CONFIG_PVH=y in
# Debian's kernels), so keep an uncompressed copy when it has the PVH note.
extract_vmlinux() {
	[ -s "$KDIR/vmlinux" ] && return 0
	local off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$KDIR/vmlinuz" | head -n1 | cut -d: -f1)
	if [ -z "$off" ]; then say "note: no xz payload in vmlinuz; booting the bzImage"; return 0; fi
	tail -c +$((off + 1)) "$KDIR/vmlinuz" | xz --single-stream -dc > "$KDIR/vmlinux.new" 2>/dev/null
	if readelf -n "$KDIR/vmlinux.new" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
		mv "$KDIR/vmlinux.new" "$KDIR/vmlinux"
	else
		rm -f "$KDIR/vmlinux.new"; say "note: vmlinux has no PVH entry; booting the bzImage"
	fi
}

install_headers() {
	if [ -e "$BUILD/Makefile" ] && [ -e "$BUILD/.config" ]; then return 0; fi
	say "installing linux-headers-$KREL on the host (stap builds modules against it)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "linux-headers-$KREL" >&2 ||
		die "apt-get install linux-headers-$KREL failed"
	[ -e "$BUILD/Makefile" ] || die "$BUILD/Makefile missing after installing linux-headers-$KREL"
}

patch_runtime() {
	# runtime: all but the relay fix (stock 4.8 transport); runtime-txfix: all
	# fixes, the copy perun's users get.  Idempotent through their stamps.
	sh "$PREPARE_RUNTIME" --dest "$RUNTIME" --without-txfix ||
		die "preparing $RUNTIME failed (systemtap is not 4.8?)"
	sh "$PREPARE_RUNTIME" --dest "$RUNTIME_TXFIX" ||
		die "preparing $RUNTIME_TXFIX failed (systemtap is not 4.8?)"
}

write_guest_init() {	# the initramfs /init, run by busybox as PID 1
	cat <<'INIT'
#!/bin/sh
# stap-vm guest /init (busybox sh, PID 1); generated by stap-vm.sh.
export PATH=/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
CTL_OK=0
msg() { echo "stap-vm-guest: $*" > /dev/ttyS0; }
halt_vm() { sync; poweroff -f; sleep 2; reboot -f; }
die() {
	msg "ERROR: $*"
	[ "$CTL_OK" = 1 ] && echo "$*" > /ctl/error
	[ "$CTL_OK" = 1 ] && dmesg > /ctl/dmesg.txt
	halt_vm
}
T0=$(cut -d' ' -f1 /proc/uptime)
for m in $(cat /etc/stap-vm-modules); do
	insmod /lib/modules/$m.ko || die "insmod $m.ko failed"
done
O9=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /ctl /newroot
mount -t 9p -o $O9,cache=none stapvmctl /ctl || die "cannot mount the control share"
CTL_OK=1
R=/newroot
mount -t 9p -o $O9,ro,cache=loose hostroot $R || die "cannot mount the host root (9p tag hostroot)"
mount -t proc proc $R/proc || die "mount proc"
mount -t sysfs sysfs $R/sys || die "mount sysfs"
mount -t devtmpfs devtmpfs $R/dev || die "mount devtmpfs"
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t debugfs debugfs $R/sys/kernel/debug || die "mount debugfs"
[ -d $R/sys/kernel/tracing ] && mount -t tracefs tracefs $R/sys/kernel/tracing
[ -d $R/run ] && mount -t tmpfs -o mode=755 tmpfs $R/run
mkdir -p $R/run/stap-vm $R/run/tmp && chmod 1777 $R/run/tmp
mount --bind /ctl $R/run/stap-vm || die "bind-mount the control share"
RW_MOUNTS=""
while IFS='	' read -r kind tag path; do
	case $kind in
	rw)	mount -t 9p -o $O9,cache=mmap "$tag" "$R$path" || die "cannot mount $path read-write"
		RW_MOUNTS="$R$path
$RW_MOUNTS";;
	tmpfs)	mount -t tmpfs -o mode=1777 tmpfs "$R$path" || die "cannot mount tmpfs on $path";;
	esac
done < /ctl/mounts
# COMMAND's stdout/stderr: virtio-serial ports named stapvm.stdout/stapvm.stderr.
OUT=; ERR=
for d in /sys/class/virtio-ports/*; do
	case $(cat $d/name 2>/dev/null) in
	stapvm.stdout) OUT=/dev/${d##*/};;
	stapvm.stderr) ERR=/dev/${d##*/};;
	esac
done
[ -c "$OUT" ] && [ -c "$ERR" ] || die "virtio-serial ports for stdout/stderr not found"
T1=$(cut -d' ' -f1 /proc/uptime)
chroot $R /usr/bin/env -i /bin/bash /run/stap-vm/cmd.sh </dev/null >$OUT 2>$ERR
RC=$?
T2=$(cut -d' ' -f1 /proc/uptime)
echo "init_start=$T0 cmd_start=$T1 cmd_end=$T2" > /ctl/times
dmesg > /ctl/dmesg.txt
echo $RC > /ctl/status
sync
echo "$RW_MOUNTS" | while read -r p; do [ -n "$p" ] && umount "$p"; done
halt_vm
INIT
}

build_initramfs() {
	local bbdeb tmp initsum
	initsum=$( { write_guest_init; echo "$GUEST_MODULES"; } | md5sum | cut -d' ' -f1)
	[ -s "$KDIR/initramfs.cpio.gz" ] && [ "$(cat "$KDIR/initramfs.sum" 2>/dev/null)" = "$initsum" ] && return 0
	bbdeb=$(apt_fetch busybox-static) || exit 125
	say "building the initramfs (busybox-static + $(echo $GUEST_MODULES | wc -w) modules)"
	tmp=$(mktemp -d "$CACHE/tmp.XXXXXX")
	mkdir -p "$tmp/x" "$tmp/root/bin" "$tmp/root/etc" "$tmp/root/lib/modules" \
		"$tmp/root/proc" "$tmp/root/sys" "$tmp/root/dev" "$tmp/root/ctl" "$tmp/root/newroot"
	dpkg-deb -x "$bbdeb" "$tmp/x" || die "dpkg-deb -x $bbdeb failed"
	cp "$tmp/x/bin/busybox" "$tmp/root/bin/busybox"
	ln -s busybox "$tmp/root/bin/sh"
	cp "$KDIR"/modules/*.ko "$tmp/root/lib/modules/"
	echo $GUEST_MODULES > "$tmp/root/etc/stap-vm-modules"
	write_guest_init > "$tmp/root/init"; chmod 755 "$tmp/root/init"
	(cd "$tmp/root" && find . -mindepth 1 | LC_ALL=C sort | "$tmp/root/bin/busybox" cpio -o -H newc 2>/dev/null) |
		gzip -1 > "$KDIR/initramfs.cpio.gz.new" || die "cpio of the initramfs failed"
	mv "$KDIR/initramfs.cpio.gz.new" "$KDIR/initramfs.cpio.gz"
	echo "$initsum" > "$KDIR/initramfs.sum"
	rm -rf "$tmp"
}

system_map() {
	# Debian's headers and image only ship a one-line stub System.map; stap needs
	# the kernel's function list (e.g. to know that uretprobes exist).  Take it
	# from /proc/kallsyms of the guest booted with nokaslr (= link addresses).
	local n
	n=$( { wc -l < "$BUILD/System.map"; } 2>/dev/null || echo 0)
	[ "$n" -gt 1000 ] && return 0
	say "booting the guest once to capture /proc/kallsyms as $BUILD/System.map"
	rm -rf "$CACHE/kallsyms"; mkdir -p "$CACHE/kallsyms"
	cmd_run --no-cwd --rw "$CACHE/kallsyms" --cwd "$CACHE/kallsyms" --timeout 300 -- \
		/bin/sh -c 'grep -v "\[" /proc/kallsyms > System.map' ||
		die "could not capture /proc/kallsyms from the guest"
	n=$(wc -l < "$CACHE/kallsyms/System.map")
	[ "$n" -gt 1000 ] || die "guest /proc/kallsyms has only $n lines"
	grep -q ' arch_uretprobe_hijack_return_addr$' "$CACHE/kallsyms/System.map" ||
		die "guest kallsyms lacks arch_uretprobe_hijack_return_addr"
	cp "$CACHE/kallsyms/System.map" "$KDIR/System.map"
	cp "$CACHE/kallsyms/System.map" "$BUILD/System.map" || die "cannot write $BUILD/System.map"
	rm -rf "$CACHE/kallsyms"
}

smoke_test() {	# smoke_test RUNTIME_DIR LABEL
	local rt=$1 label=$2 d=$CACHE/smoke n
	rm -rf "$d"; mkdir -p "$d"
	printf '%s\n' '__attribute__((noinline)) int f(int x){return x+1;}' \
		'int main(void){int s=0; for(int i=0;i<10;i++) s+=f(i); return s==55?0:1;}' > "$d/p.c"
	cc -g -O1 -o "$d/p" "$d/p.c" || die "smoke test: cc failed"
	printf 'probe process("%s").function("f").call { printf("0 %%d\\n", tid()) }\n' "$d/p" > "$d/s.stp"
	printf 'probe process("%s").function("f").return { printf("1 %%d\\n", tid()) }\n' "$d/p" >> "$d/s.stp"
	(cd "$d" && stap -r "$KREL" -R "$rt" -p4 -m stapvm_smoke s.stp > stap.log 2>&1) ||
		{ tail -n 30 "$d/stap.log" >&2; die "smoke test ($label): stap -p4 for $KREL failed (log: $d/stap.log)"; }
	cmd_run --no-cwd --rw "$d" --cwd "$d" --timeout 300 -- staprun -o out.txt -c "$d/p" stapvm_smoke.ko ||
		die "smoke test ($label): staprun failed in the guest"
	n=$(grep -c '^[01] ' "$d/out.txt" 2>/dev/null || true)
	[ "$n" = 20 ] || die "smoke test ($label): staprun traced ${n:-0}/20 events"
	say "OK: staprun traced 20/20 events in the guest ($KREL, $label)"
	rm -rf "$d"
}

cmd_prepare() {
	need_root
	if ! command -v "$QEMU" >/dev/null 2>&1 && [ "$QEMU" = qemu-system-x86_64 ]; then
		say "installing qemu-system-x86"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-system-x86 >&2 ||
			die "apt-get install qemu-system-x86 failed"
	fi
	need_tools "$QEMU" apt-get apt-cache dpkg-deb stap staprun cc patch gzip xz readelf md5sum flock timeout
	mkdir -p "$CACHE" || die "cannot create $CACHE"
	exec 8>"$CACHE/.prepare.lock"; flock 8
	rm -rf "$CACHE"/tmp.* "$CACHE"/kernel/*.new	# leftovers of an interrupted prepare
	resolve_release
	[ -s "$CACHE/release" ] || echo "$KREL" > "$CACHE/release"
	say "guest kernel: $KREL; cache: $CACHE"
	extract_kernel
	extract_vmlinux
	install_headers
	patch_runtime
	build_initramfs
	if [ -e "$CACHE/prepared-$KREL" ] && [ "${1:-}" != --force ] &&
		[ "$(wc -l < "$BUILD/System.map" 2>/dev/null || echo 0)" -gt 1000 ]; then
		say "prepared already (smoke tests skipped; prepare --force runs them)"
		return 0
	fi
	touch "$CACHE/prepared-$KREL"	# lets cmd_run boot the guest for the steps below
	system_map || { rm -f "$CACHE/prepared-$KREL"; exit 125; }
	smoke_test "$RUNTIME" runtime || { rm -f "$CACHE/prepared-$KREL"; exit 125; }
	smoke_test "$RUNTIME_TXFIX" runtime-txfix || { rm -f "$CACHE/prepared-$KREL"; exit 125; }
	say "prepared: stap -r $KREL -R $RUNTIME (or -R $RUNTIME_TXFIX) ...; $SELF run -- staprun ..."
}

# -------------------------------------------------------------------- run ---
q9path() { printf '%s' "${1//,/,,}"; }	# qemu option values double their commas

cmd_run() {
	local rw=() tmpfs=() envs=() cwd=$PWD share_cwd=1 timeout=${STAP_VM_TIMEOUT:-900}
	local mem=${STAP_VM_MEM:-1024} keep=0 verbose=0 a
	while [ $# -gt 0 ]; do
		case $1 in
			--rw) [ $# -ge 2 ] || die "--rw needs a directory"; rw+=("$2"); shift 2;;
			--no-cwd) share_cwd=0; shift;;
			--cwd) [ $# -ge 2 ] || die "--cwd needs a directory"; cwd=$2; shift 2;;
			--tmpfs) [ $# -ge 2 ] || die "--tmpfs needs a directory"; tmpfs+=("$2"); shift 2;;
			--env) [ $# -ge 2 ] || die "--env needs NAME=VALUE"; envs+=("$2"); shift 2;;
			--timeout) timeout=${2:-}; shift 2 || die "--timeout needs seconds";;
			--mem) mem=${2:-}; shift 2 || die "--mem needs megabytes";;
			--keep) keep=1; shift;;
			-v|--verbose) verbose=1; shift;;
			--) shift; break;;
			-*) die "unknown run option $1";;
			*) break;;
		esac
	done
	[ $# -gt 0 ] || die "usage: $PROG run [OPTIONS] -- COMMAND [ARGS...]"
	case $timeout in ''|*[!0-9]*) die "--timeout: not a number: $timeout";; esac
	case $mem in ''|*[!0-9]*) die "--mem: not a number: $mem";; esac
	need_root
	require_prepared
	need_tools "$QEMU" timeout
	case $cwd in /*) ;; *) cwd=$PWD/$cwd;; esac
	[ -d "$cwd" ] || die "--cwd: no such directory on the host: $cwd"
	[ "$share_cwd" = 1 ] && rw=("$cwd" "${rw[@]}")

	local qargs=() i=0 p tag rwlist="" rwdirs=()
	for p in "${rw[@]}"; do
		p=$(readlink -f -- "$p") || die "--rw: cannot resolve $p"
		[ -d "$p" ] || die "--rw: not a directory: $p"
		case $p in
			/) die "--rw /: refusing to share the whole host root read-write";;
			/proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/run|/run/*)
				die "--rw $p: paths under /proc, /sys, /dev, /run are guest-private";;
			*$'\t'*|*$'\n'*) die "--rw: tabs/newlines in paths are not supported: $p";;
		esac
		case "$rwlist" in *$'\n'"$p"$'\n'*) continue;; esac
		rwlist+=$'\n'"$p"$'\n'
		rwdirs+=("$p")
	done
	for p in "${tmpfs[@]}"; do
		case $p in /*) ;; *) die "--tmpfs needs an absolute path: $p";; esac
		case $p in *$'\t'*|*$'\n'*) die "--tmpfs: tabs/newlines in paths are not supported: $p";; esac
		[ -d "$p" ] || die "--tmpfs $p: no such directory on the host (the read-only guest view cannot create it)"
	done
	for a in "${envs[@]}"; do
		case $a in [A-Za-z_]*=*) ;; *) die "--env: not NAME=VALUE: $a";; esac
	done

	mkdir -p "$CACHE/runs"
	RUN=$(mktemp -d "$CACHE/runs/run.XXXXXX") || die "cannot create a run directory"
	: > "$RUN/mounts"
	for p in "${rwdirs[@]}"; do
		tag=rw$i; i=$((i+1))
		printf 'rw\t%s\t%s\n' "$tag" "$p" >> "$RUN/mounts"
		qargs+=(-virtfs "local,path=$(q9path "$p"),mount_tag=$tag,security_model=none,multidevs=remap")
	done
	for p in "${tmpfs[@]}"; do
		printf 'tmpfs\t-\t%s\n' "$p" >> "$RUN/mounts"
	done
	# Sort so that parents are mounted before children.
	LC_ALL=C sort -t$'\t' -k3,3 -o "$RUN/mounts" "$RUN/mounts"

	{
		echo '#!/bin/bash'
		echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb TMPDIR=/run/tmp'
		for a in "${envs[@]}"; do printf 'export %q\n' "$a"; done
		printf 'cd -- %q || { echo "stap-vm: cannot cd to %q in the guest" >&2; exit 125; }\n' "$cwd" "$cwd"
		printf 'exec'; printf ' %q' "$@"; printf '\n'
	} > "$RUN/cmd.sh"

	local cpu accel kimg=$KDIR/vmlinuz
	[ -s "$KDIR/vmlinux" ] && [ "${STAP_VM_BOOT:-pvh}" != bzimage ] && kimg=$KDIR/vmlinux
	case $ACCEL in
		tcg) accel=tcg; cpu=${STAP_VM_CPU:-qemu64};;
		kvm) accel=kvm; cpu=${STAP_VM_CPU:-host};;
		*) die "STAP_VM_ACCEL must be tcg or kvm, not $ACCEL";;
	esac
	# The guest's stdout/stderr ports are QEMU file chardevs.  When our
	# stdout/stderr is a pipe or a terminal, QEMU reopens it through
	# /proc/self/fd/{4,3}, so output streams live.  Otherwise (regular files,
	# whose offset a reopened description would not share; sockets, which
	# cannot be reopened) it goes to files copied out after the guest stopped.
	local outdev=$RUN/stdout errdev=$RUN/stderr
	exec 3>&2 4>&1
	if [ -p /proc/self/fd/4 ] || [ -c /proc/self/fd/4 ]; then outdev=/proc/self/fd/4; fi
	if [ -p /proc/self/fd/3 ] || [ -c /proc/self/fd/3 ]; then errdev=/proc/self/fd/3; fi
	qargs=(-nodefaults -no-user-config -display none -no-reboot
		-machine "pc,accel=$accel" -cpu "$cpu" -smp "${STAP_VM_SMP:-1}" -m "$mem"
		-kernel "$kimg" -initrd "$KDIR/initramfs.cpio.gz" -append "$KCMDLINE"
		-chardev "file,id=con,path=$(q9path "$RUN/console.log")" -serial chardev:con
		-device virtio-serial-pci,id=vser
		-chardev "file,id=out,path=$(q9path "$outdev"),append=on" -device virtserialport,bus=vser.0,chardev=out,name=stapvm.stdout
		-chardev "file,id=err,path=$(q9path "$errdev"),append=on" -device virtserialport,bus=vser.0,chardev=err,name=stapvm.stderr
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$(q9path "$RUN"),mount_tag=stapvmctl,security_model=none"
		"${qargs[@]}")

	local t0 t1 qrc rc
	t0=$(date +%s.%N)
	timeout --foreground -k 10 "$timeout" "$QEMU" "${qargs[@]}" </dev/null 2>"$RUN/qemu.log" &
	QEMU_WAIT_PID=$!
	trap 'kill $QEMU_WAIT_PID 2>/dev/null' INT TERM HUP
	wait $QEMU_WAIT_PID; qrc=$?
	trap - INT TERM HUP
	t1=$(date +%s.%N)
	exec 3>&- 4>&-
	[ "$outdev" = "$RUN/stdout" ] && [ -s "$RUN/stdout" ] && cat "$RUN/stdout"
	[ "$errdev" = "$RUN/stderr" ] && [ -s "$RUN/stderr" ] && cat "$RUN/stderr" >&2

	if [ -s "$RUN/status" ]; then
		rc=$(cat "$RUN/status")
	elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		say "ERROR: the guest did not finish within ${timeout}s (--timeout); killed"
		[ -s "$RUN/console.log" ] && { say "last guest console lines:"; tail -n 10 "$RUN/console.log" | sed 's/^/  console: /' >&2; }
		rc=124; keep=1
	else
		rc=125
		if [ -s "$RUN/error" ]; then say "ERROR in the guest: $(cat "$RUN/error")"; fi
		say "ERROR: the guest stopped without reporting a status (qemu exit $qrc)"
		[ -s "$RUN/qemu.log" ] && sed 's/^/  qemu: /' "$RUN/qemu.log" >&2
		[ -s "$RUN/console.log" ] && { say "last guest console lines:"; tail -n 25 "$RUN/console.log" | sed 's/^/  console: /' >&2; }
		keep=1
	fi
	if [ "$verbose" = 1 ]; then
		[ -s "$RUN/dmesg.txt" ] && { say "guest kernel log after boot:"; sed -n '/Run \/init as init process/,$p' "$RUN/dmesg.txt" | sed 's/^/  dmesg: /' >&2; }
		local times=""
		[ -s "$RUN/times" ] && times=$(cat "$RUN/times")
		say "timing: host wall $(echo "$t1 - $t0" | bc 2>/dev/null || awk "BEGIN{print $t1-$t0}")s; guest uptime at $times; exit $rc"
	fi
	if [ "$keep" = 1 ]; then say "run directory kept: $RUN"; else rm -rf "$RUN"; fi
	return "$rc"
}

# ------------------------------------------------------------------ other ---
cmd_status() {
	resolve_release
	echo "cache:    $CACHE ($(du -sh "$CACHE" 2>/dev/null | cut -f1))"
	echo "release:  $KREL"
	echo "prepared: $([ -e "$CACHE/prepared-$KREL" ] && echo yes || echo no)"
	echo "kernel:   $( [ -s "$KDIR/vmlinuz" ] && echo "$KDIR/vmlinuz" || echo missing)"
	echo "initrd:   $( [ -s "$KDIR/initramfs.cpio.gz" ] && echo "$KDIR/initramfs.cpio.gz" || echo missing)"
	echo "runtime:  $( [ -s "$RUNTIME/.perun-kruntime" ] && echo "$RUNTIME" || echo missing)"
	echo "runtime-txfix: $( [ -s "$RUNTIME_TXFIX/.perun-kruntime" ] && echo "$RUNTIME_TXFIX" || echo missing)"
	echo "headers:  $( [ -e "$BUILD/Makefile" ] && readlink -f "$BUILD" || echo missing)"
	echo "System.map: $(wc -l < "$BUILD/System.map" 2>/dev/null || echo 0) lines"
}

pick_runtime() {	# sets RT from --txfix / STAP_VM_TXFIX
	RT=$RUNTIME
	if [ "${1:-}" = --txfix ] || [ "${STAP_VM_TXFIX:-0}" = 1 ]; then RT=$RUNTIME_TXFIX; fi
}

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$SELF" | sed '/^set -uo/d'; }

main() {
	local cmd=${1:-}
	[ $# -gt 0 ] && shift
	case $cmd in
		prepare) cmd_prepare "$@";;
		release) require_prepared; echo "$KREL";;
		runtime) require_prepared; pick_runtime "$@"; echo "$RT";;
		env) require_prepared
			printf 'STAP_VM_RELEASE=%s\nSTAP_VM_RUNTIME=%s\nSTAP_VM_RUNTIME_TXFIX=%s\n' "$KREL" "$RUNTIME" "$RUNTIME_TXFIX";;
		stap) require_prepared; pick_runtime "$@"; [ "${1:-}" = --txfix ] && shift
			exec stap -r "$KREL" -R "$RT" "$@";;
		run) cmd_run "$@";;
		status) cmd_status;;
		clean) resolve_release; rm -rf "$CACHE"; say "removed $CACHE (linux-headers-$KREL and $BUILD/System.map stay installed)";;
		-h|--help|help) usage;;
		'') usage; exit 2;;
		*) say "unknown command: $cmd"; usage >&2; exit 2;;
	esac
}

main "$@"
