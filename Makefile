# savingsd — the two commands: `make run` and `make test`. Both install what is missing first.
SWIFT ?= swift
APT_PACKAGES := libsystemd-dev libsqlite3-dev pkg-config systemd faketime sqlite3
# The benchmark baselines also need hledger (make bench only).
BENCH_PACKAGES := hledger
BIN = $(shell $(SWIFT) build --show-bin-path)

.PHONY: all deps build run test bench bench-smoke fuzz clean

all: build

## Install missing Debian packages (needs root or sudo).
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

## Start savingsd in the foreground with embedded defaults (user mode).
run: build
	@socket=$$($(BIN)/savingsd --check-config | sed -n 's/^rpc.socket = "\(.*\)".*/\1/p'); \
	echo ""; \
	echo "savingsd is starting in the foreground; stop it with Ctrl-C."; \
	echo "Talk to it from another terminal:"; \
	echo "  $(BIN)/savingsctl status"; \
	echo "  $(BIN)/savingsctl goal add Emergency --target 5000 --currency EUR --deadline 2027-06-30"; \
	echo "  $(BIN)/savingsctl goal list"; \
	echo "  echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"help\"}' | socat - UNIX-CONNECT:$$socket"; \
	echo ""
	$(BIN)/savingsd

## Build everything and run every test (unit and integration), then the benchmark smoke run.
test: deps
	$(SWIFT) build --build-tests
	SAVINGSD_BIN_DIR="$(BIN)" $(SWIFT) test --skip-build
	$(BIN)/savings-bench --smoke

## Release-build benchmarks on the full dataset (several minutes); writes BENCHMARKS.md.
## Figures are ratios to baselines measured in the same run; timing never fails the build.
bench: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_PACKAGES)"
	$(SWIFT) build -c release
	$$($(SWIFT) build -c release --show-bin-path)/savings-bench --output BENCHMARKS.md

## The benchmark on a tiny dataset, to keep it working (part of make test).
bench-smoke: deps
	$(SWIFT) build
	$(BIN)/savings-bench --smoke

# libFuzzer over the request decoder and parameter validation (FUZZ_SECONDS, default 600).
FUZZ_SECONDS ?= 600
fuzz: deps
	Fuzz/build.sh
	mkdir -p .build/fuzz/corpus
	ASAN_OPTIONS=detect_leaks=0 .build/fuzz/fuzz-requests -max_total_time=$(FUZZ_SECONDS) \
		-artifact_prefix=.build/fuzz/ .build/fuzz/corpus Fuzz/corpus

clean:
	rm -rf .build
