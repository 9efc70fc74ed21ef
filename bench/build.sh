# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by the bench scripts: bench_build SRC OUT builds an optimized perun
# (-O2, no sanitizers, what users run) from the tree SRC into OUT/build, with
# its memlock shim, calibration helper and uprobe loader, and sets PERUN to it.  The
# configure-built ./perun of a CI tree has sanitizers, which would dominate
# any timing.
bench_build() {
	_src=$1 _b=$2/build
	mkdir -p "$_b" || return 1
	printf '%s\n' '#define _GNU_SOURCE 1' '#define PACKAGE_VERSION "bench"' \
		'#define STAP_PATH "/usr/bin/stap"' '#define STAPBPF_PATH "/usr/bin/stapbpf"' \
		'#define STAPRUN_PATH "/usr/bin/staprun"' >"$_b/config.h"
	_pkgs="libdw libelf zlib json-c libgit2 libpcre2-8 yaml-0.1 capstone gsl libbpf liblzma"
	# the loader's BPF programs, embedded as configure's build does
	mkdir -p "$_b/src/bpf" || return 1
	clang -target bpf -O2 -g -D__TARGET_ARCH_x86 -I"/usr/include/$(cc -print-multiarch)" \
		-I"$_src/src" -c "$_src/src/bpf/loader.bpf.c" -o "$_b/src/bpf/loader.bpf.o" || return 1
	{
		echo '#include <stddef.h>'
		echo 'extern const unsigned char perun_loader_bpf[];'
		echo 'extern const size_t perun_loader_bpf_len;'
		echo '__attribute__((aligned(8))) const unsigned char perun_loader_bpf[] = {'
		od -An -v -tx1 "$_b/src/bpf/loader.bpf.o" | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
		echo '};'
		echo 'const size_t perun_loader_bpf_len = sizeof(perun_loader_bpf);'
	} >"$_b/src/bpf/loader-bpf.c" || return 1
	# shellcheck disable=SC2046
	cc -O2 -g -std=c11 -I"$_b" -I"$_src/src" $(pkg-config --cflags $_pkgs) \
		-DPKGDATADIR=\"$_src\" -DPKGLIBDIR=\"$_b\" \
		$(ls "$_src"/src/*.c "$_src"/src/*/*.c |
			grep -v -e memlock-shim -e calibrate-helper -e uprobes-main -e '\.bpf\.c$' -e 'loader-bpf\.c$') \
		"$_b/src/bpf/loader-bpf.c" -o "$_b/perun" $(pkg-config --libs $_pkgs) -lstdc++ -lm || return 1
	# shellcheck disable=SC2046
	cc -O2 -g -std=c11 -I"$_b" -I"$_src/src" $(pkg-config --cflags $_pkgs) \
		-DPKGDATADIR=\"$_src\" -DPKGLIBDIR=\"$_b\" \
		$(ls "$_src"/src/*/*.c | grep -v -e memlock-shim -e calibrate-helper -e '\.bpf\.c$' -e 'loader-bpf\.c$') \
		"$_b/src/bpf/loader-bpf.c" -o "$_b/perun-uprobes" $(pkg-config --libs $_pkgs) -lstdc++ -lm || return 1
	cc -shared -fPIC -O2 -o "$_b/perun-memlock-shim.so" "$_src/src/util/memlock-shim.c" -ldl ||
		return 1
	cc -std=c11 -g -O2 -fno-ipa-icf -fno-omit-frame-pointer -o "$_b/perun-calib" \
		"$_src/src/runtime/calibrate-helper.c" || return 1
	PERUN="$_b/perun"
}
