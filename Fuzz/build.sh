#!/bin/sh
# Builds the libFuzzer target over the request decoder and parameter validation:
#   make fuzz FUZZ_SECONDS=3600
# runs it (new inputs collect in .build/fuzz/corpus, crashes in .build/fuzz/; Fuzz/corpus holds
# the committed seeds; leak reports at exit are the runtime's global metadata, hence
# ASAN_OPTIONS=detect_leaks=0).
set -eu
cd "$(dirname "$0")/.."
out=.build/fuzz
mkdir -p "$out"
flags="-sanitize=fuzzer,address -parse-as-library -Onone"
# Core over swift-crypto (on-chain addresses and keys) as SwiftPM builds it, uninstrumented:
# its module, and the objects of it and the C libraries under it. Not the rules files over
# TOMLKit, which requests never reach.
swift build --target Crypto
debug=$(swift build --show-bin-path)
crypto=$(find "$debug/Crypto.build" "$debug/CryptoBoringWrapper.build" "$debug/CCryptoBoringSSL.build" \
    "$debug/CCryptoBoringSSLShims.build" "$debug/CXKCP.build" "$debug/CXKCPShims.build" -name '*.o')
core=$(ls Sources/SavingsCore/*.swift Sources/SavingsCore/*/*.swift | grep -v '+TOML')
swiftc $flags -module-name SavingsCore -I "$debug/Modules" -emit-module -emit-module-path "$out/SavingsCore.swiftmodule" \
    -wmo -emit-object -o "$out/SavingsCore.o" $core
swiftc $flags -module-name SavingsRPC -I "$out" -I "$debug/Modules" -emit-module -emit-module-path "$out/SavingsRPC.swiftmodule" \
    -wmo -emit-object -o "$out/SavingsRPC.o" Sources/SavingsRPC/*.swift
swiftc $flags -I "$out" -I "$debug/Modules" -module-name FuzzRequests Fuzz/RequestDecoder.swift "$out/SavingsCore.o" "$out/SavingsRPC.o" \
    $crypto -o "$out/fuzz-requests"
echo "$out/fuzz-requests"
