#!/bin/sh
# Builds savings-fuzz for libFuzzer into .build/fuzz (a scratch path of its own, so the normal
# debug build is left alone) and prints the binary's path. `make fuzz` runs every target.
#
# Why not `swift build --sanitize=fuzzer`: the driver then links libFuzzer's whole runtime with
# --whole-archive, its `main` (FuzzerMain.o) included, which clashes with the executable's own
# main ("multiple definition of 'main'"). savings-fuzz has its own main (it picks the target by
# its first argument, and replays files when built plainly) and calls libFuzzer's
# LLVMFuzzerRunDriver, so:
#   - Swift code gets libFuzzer's instrumentation from the frontend alone
#     (-Xfrontend -sanitize=fuzzer,address: coverage counters, comparisons traced; the frontend
#     keeps only its last -sanitize, hence address named again) and AddressSanitizer from
#     --sanitize=address (compile and link);
#   - C and C++ code (toml++ under TOMLKit, BoringSSL under swift-crypto) gets coverage from
#     -fsanitize=fuzzer-no-link;
#   - the link takes libclang_rt.fuzzer_no_main (the runtime without main) whole, and the C++
#     standard library it is written against (-lstdc++).
# Release (-O) for throughput (1,000-5,000 inputs a second per target on this machine); every
# module of the product is instrumented, dependencies included. The -merge=1 and -fork=N
# processes libFuzzer starts get the target from SAVINGS_FUZZ_TARGET, set by the first.
set -eu
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
scratch=.build/fuzz
toolchain=$(dirname "$(readlink -f "$(command -v swiftc)")")
runtime="$("$toolchain/clang" -print-resource-dir)/lib/linux/libclang_rt.fuzzer_no_main-$(uname -m).a"
[ -f "$runtime" ] || { echo "libFuzzer's runtime is not in this toolchain: $runtime" >&2; exit 1; }
$SWIFT build -c release --scratch-path "$scratch" --product savings-fuzz \
    --sanitize=address \
    -Xswiftc -DFUZZING -Xswiftc -Xfrontend -Xswiftc -sanitize=fuzzer,address \
    -Xcc -fsanitize=fuzzer-no-link -Xcxx -fsanitize=fuzzer-no-link \
    -Xlinker --whole-archive -Xlinker "$runtime" -Xlinker --no-whole-archive -Xlinker -lstdc++ >&2
echo "$($SWIFT build -c release --scratch-path "$scratch" --show-bin-path)/savings-fuzz"
