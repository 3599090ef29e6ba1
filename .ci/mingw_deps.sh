#!/bin/bash
# .ci/mingw_deps.sh PREFIX — the C libraries onnx2cl-sd needs, cross-built for x86_64 Windows.
# Debian ships no MinGW builds of zlib, libpng, cJSON or libmicrohttpd, so this takes their Debian
# source packages (bookworm: zlib 1.2.13, libpng1.6 1.6.39, cjson 1.7.15, libmicrohttpd 0.9.75,
# Debian's patches applied) with `apt-get source` through a private apt configuration under
# PREFIX/apt (a deb-src entry there only, with its own lists and cache: the machine's apt setup is
# untouched), and compiles them with x86_64-w64-mingw32-gcc into static libraries:
# PREFIX/lib/{libz,libpng16,libcjson,libmicrohttpd}.a, headers in PREFIX/include (zlib.h, png.h,
# cjson/cJSON.h, microhttpd.h). zlib, libpng and cJSON: their sources compiled directly;
# libmicrohttpd: its own configure (--host=x86_64-w64-mingw32, static, no HTTPS, no docs, examples
# or tests; W32 threads and WSAPoll) and `make` of src/microhttpd only, in the background while
# the others compile. Needs network access to the Debian archive and dpkg-source (dpkg-dev, part of
# build-essential). Takes about 30 s on 2 cores (libmicrohttpd's configure: ~18 s of it).
# Nothing is done when PREFIX/.done names the same set of libraries (a PREFIX made before
# libmicrohttpd was added is rebuilt; delete the folder to rebuild anyway). Exit status 1 on any
# failure.
set -eu
p=$1
stamp="zlib libpng1.6 cjson libmicrohttpd"
[ "$(cat "$p/.done" 2>/dev/null)" = "$stamp" ] && exit 0
rm -rf "$p"; mkdir -p "$p/apt/lists/partial" "$p/apt/cache" "$p/apt/parts" "$p/src" "$p/include/cjson" "$p/lib"
p=$(cd "$p" && pwd)
cat > "$p/apt/parts/debian-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
aptc=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$p/apt/parts"
      -o Dir::State::Lists="$p/apt/lists" -o Dir::Cache="$p/apt/cache" -o APT::Sandbox::User=root)
apt-get -qq "${aptc[@]}" update
(cd "$p/src" && apt-get -qq "${aptc[@]}" source --download-only $stamp)
for d in "$p"/src/*.dsc; do
  n=$(basename "$d"); n=${n%%_*}
  dpkg-source --no-check -x "$d" "$p/src/$n" > /dev/null
done
cc=x86_64-w64-mingw32-gcc; ar=x86_64-w64-mingw32-ar
mhd() {  # libmicrohttpd with its configure (its W32 socket and thread layers need its checks)
  cd "$p/src/libmicrohttpd"
  ./configure -q --host=x86_64-w64-mingw32 --disable-shared --enable-static --disable-https \
    --without-gnutls --disable-doc --disable-examples --disable-curl --disable-nls \
    --disable-postprocessor --disable-bauth --disable-dauth --disable-httpupgrade \
    --disable-dependency-tracking --disable-sendfile --enable-epoll=no
  make -s -C src/microhttpd -j2 > /dev/null
  cp src/include/microhttpd.h "$p/include/"
  cp src/microhttpd/.libs/libmicrohttpd.a "$p/lib/"
}
mhd > "$p/mhd.log" 2>&1 &
mhd_pid=$!
lib() {  # lib NAME SRCDIR FILES...: compiles FILES (2 at a time) into PREFIX/lib/libNAME.a
  local name=$1 dir=$2; shift 2
  mkdir -p "$p/obj/$name"
  printf '%s\n' "$@" | xargs -P2 -I{} $cc -O2 -w -I"$p/include" -I"$dir" -c "$dir/{}.c" -o "$p/obj/$name/{}.o"
  $ar rcs "$p/lib/lib$name.a" "$p/obj/$name"/*.o
}
z=$p/src/zlib
cp "$z/zlib.h" "$z/zconf.h" "$p/include/"
lib z "$z" adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate \
  inftrees trees uncompr zutil
png=$p/src/libpng1.6
cp "$png/scripts/pnglibconf.h.prebuilt" "$png/pnglibconf.h"
cp "$png/png.h" "$png/pngconf.h" "$png/pnglibconf.h" "$p/include/"
lib png16 "$png" png pngerror pngget pngmem pngpread pngread pngrio pngrtran pngrutil pngset \
  pngtrans pngwio pngwrite pngwtran pngwutil
cp "$p/src/cjson/cJSON.h" "$p/include/cjson/"
lib cjson "$p/src/cjson" cJSON
wait $mhd_pid || { echo "libmicrohttpd failed:"; tail -20 "$p/mhd.log"; exit 1; }
echo "$stamp" > "$p/.done"
