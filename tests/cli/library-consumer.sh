#!/bin/sh
# SPDX-License-Identifier: MIT
# libcrumbs as a program outside this tree links it: `make install` into a
# temporary root, then tests/consumer/consumer.c and consumer.cpp, copied
# out of the tree, are built with nothing but pkg-config's flags for
# crumbs (and for vulkan, which they use themselves), static and shared.
# They define functions named like crumbs' internals, capture a frame on
# lavapipe, and the installed crumbs reads the capture back. Then `make
# uninstall` must leave no file behind.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh
CC=${CC:-cc}
CXX=${CXX:-c++}
dest=$tmp/root
prefix=/usr/local
# The version the build was made with (VERSION in the Makefile).
version=$(sed -n 's/^#define CRUMBS_VERSION "\(.*\)"$/\1/p' "$BUILD/version.h")
major=${version%%.*}

# A sanitized build installs a sanitized libcrumbs; a program that links it
# is built with the same sanitizers, and runs without leak checks like the
# renderer (lavapipe's own leaks at exit).
san=
if [ -n "${CRUMBS_SANITIZE:-}" ]; then
	san="-fsanitize=$CRUMBS_SANITIZE -fno-sanitize-recover=all"
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# Not the make running the tests: everything is built; this only copies.
env -u MAKEFLAGS -u MAKELEVEL make -s install BUILD="$BUILD" DESTDIR="$dest" PREFIX=$prefix \
	${CRUMBS_SANITIZE:+SANITIZE=$CRUMBS_SANITIZE} >"$tmp/install.log" 2>&1
result $? "make install DESTDIR=... PREFIX=$prefix"
sed 's/^/#   /' "$tmp/install.log"

missing=
for f in bin/crumbs lib/libVkLayer_crumbs.so share/vulkan/explicit_layer.d/VkLayer_crumbs.json \
	lib/libcrumbs.a "lib/libcrumbs.so.$version" include/crumbs.h include/crumbs_file.h \
	lib/pkgconfig/crumbs.pc; do
	[ -f "$dest$prefix/$f" ] || missing="$missing $f"
done
[ -n "$version" ] && [ -z "$missing" ]
result $? "the program, the layer, its manifest, both libraries, both headers and crumbs.pc are installed${missing:+ (missing:$missing)}"
[ "$(readlink "$dest$prefix/lib/libcrumbs.so.$major")" = "libcrumbs.so.$version" ] &&
	[ "$(readlink "$dest$prefix/lib/libcrumbs.so")" = "libcrumbs.so.$major" ]
result $? "libcrumbs.so -> libcrumbs.so.$major -> libcrumbs.so.$version"
grep -q "\"implementation_version\": \"$major\"" \
	"$dest$prefix/share/vulkan/explicit_layer.d/VkLayer_crumbs.json"
result $? "the layer's manifest gives the implementation version $major"

PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig
PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
# crumbs.h includes vulkan/vulkan.h: a program that uses crumbs needs
# Vulkan's flags whether it names Vulkan itself or not.
requires=$(pkg-config --print-requires crumbs 2>&1 | tr '\n' ' ')
[ "$requires" = "vulkan " ]
result $? "crumbs.pc: Requires is vulkan (got '$requires')"
requires=$(pkg-config --print-requires-private crumbs 2>&1 | tr '\n' ' ')
[ "$requires" = "libzstd libpcre2-8 libutf8proc " ]
result $? "crumbs.pc: Requires.private is libzstd, libpcre2-8 and libutf8proc (got '$requires')"
modversion=$(pkg-config --modversion crumbs 2>&1)
[ "$modversion" = "$version" ]
result $? "crumbs.pc: the version is $version (got '$modversion')"

# Out of the tree: nothing of the sources is reachable from there.
mkdir "$tmp/src"
cp tests/consumer/consumer.c tests/consumer/consumer.cpp "$tmp/src"
cd "$tmp/src" || exit 1
# The programs call Vulkan themselves; crumbs.pc alone brings its flags.
cflags="$(pkg-config --cflags crumbs)"
shared="$(pkg-config --libs crumbs)"
# Static: pkg-config --static, with the linker asked for archives where
# both are installed (as meson and CMake do for a static dependency);
# only the Vulkan loader, which has no archive, and the C library stay
# shared.
vulkan_libs=" $(pkg-config --libs-only-l vulkan) "
static="-Wl,-Bstatic"
for word in $(pkg-config --static --libs crumbs); do
	case $vulkan_libs in *" $word "*) ;; *) static="$static $word" ;; esac
done
static="$static -Wl,-Bdynamic $(pkg-config --libs vulkan)"

printf '#include <crumbs.h>\n' >header.cpp
$CXX -std=c++11 -Wall -Wextra -Wpedantic -Werror $cflags -fsyntax-only header.cpp 2>"$tmp/err"
result $? "crumbs.h compiles as C++11 with -Wall -Wextra -Wpedantic -Werror"
sed 's/^/#   /' "$tmp/err"

build() { # NAME COMPILER SOURCE FLAGS...
	name=$1 compiler=$2 source=$3
	shift 3
	# shellcheck disable=SC2086 # the flags are words
	$compiler -Wall -Wextra -Werror $san -o "$name" "$source" "$@" >"$tmp/err" 2>&1
	result $? "$name builds with pkg-config's flags alone"
	echo "#   $compiler $source $*" | sed "s|$dest|ROOT|g"
	sed 's/^/#   /' "$tmp/err"
}
# shellcheck disable=SC2086
{
build consumer-c-static "$CC" consumer.c -Wpedantic $cflags $static
build consumer-c-shared "$CC" consumer.c -Wpedantic $cflags $shared
build consumer-cpp-static "$CXX" consumer.cpp $cflags $static
build consumer-cpp-shared "$CXX" consumer.cpp $cflags $shared
}

for p in consumer-c-static consumer-cpp-static; do
	[ -x "$p" ] && ! ldd "./$p" | grep -q libcrumbs
	result $? "$p links libcrumbs statically (ldd names no libcrumbs.so)"
done
for p in consumer-c-shared consumer-cpp-shared; do
	LD_LIBRARY_PATH=$dest$prefix/lib ldd "./$p" 2>/dev/null |
		grep -q "libcrumbs.so.$major => $dest$prefix/lib/libcrumbs.so.$major"
	result $? "$p loads the installed libcrumbs.so.$major"
done

for p in consumer-c-static consumer-c-shared consumer-cpp-static consumer-cpp-shared; do
	mkdir "$tmp/$p.out"
	LD_LIBRARY_PATH=$dest$prefix/lib "./$p" "$tmp/$p.out" >"$tmp/$p.path" 2>"$tmp/err"
	result $? "$p captures a frame on lavapipe"
	sed 's/^/#   /' "$tmp/err"
	path=$(cat "$tmp/$p.path")
	case $p in consumer-c-*) want="Consumer Pass 1" ;; *) want="Consumer Pass 2" ;; esac
	[ -f "$path" ] && "$dest$prefix/bin/crumbs" report --ascii "$path" >"$tmp/$p.report" 2>&1 &&
		names "$tmp/$p.report" | grep -q "^ *$want *\$"
	result $? "$p: the installed crumbs reports its scope '$want'"
	case $p in consumer-c-*) want="Consumer CPU 1" ;; *) want="Consumer CPU 2" ;; esac
	names "$tmp/$p.report" | grep -q "^ *$want *\$"
	result $? "$p: and its CPU scope '$want'"
done

cd "$ROOT" || exit 1
env -u MAKEFLAGS -u MAKELEVEL make -s uninstall BUILD="$BUILD" DESTDIR="$dest" PREFIX=$prefix \
	>"$tmp/uninstall.log" 2>&1
result $? "make uninstall"
find "$dest" ! -type d >"$tmp/left"
[ ! -s "$tmp/left" ]
result $? "make uninstall leaves no file behind"
sed 's/^/#   left: /' "$tmp/left"

exit $bad
