# savingsd — the two commands: `make run` and `make test`. Both install what is missing first.
SWIFT ?= swift
APT_PACKAGES := libsystemd-dev libsqlite3-dev pkg-config systemd faketime
BIN = $(shell $(SWIFT) build --show-bin-path)

.PHONY: all deps build run test bench fuzz clean

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

## Build everything and run every test (unit and integration).
test: deps
	$(SWIFT) build --build-tests
	SAVINGSD_BIN_DIR="$(BIN)" $(SWIFT) test --skip-build

## Release-build benchmarks; figures are ratios to a baseline measured in the same run.
bench: deps
	$(SWIFT) build -c release --product savings-bench
	$$($(SWIFT) build -c release --show-bin-path)/savings-bench

# libFuzzer over the request decoder and parameter validation (FUZZ_SECONDS, default 600).
FUZZ_SECONDS ?= 600
fuzz: deps
	Fuzz/build.sh
	mkdir -p .build/fuzz/corpus
	ASAN_OPTIONS=detect_leaks=0 .build/fuzz/fuzz-requests -max_total_time=$(FUZZ_SECONDS) \
		-artifact_prefix=.build/fuzz/ .build/fuzz/corpus Fuzz/corpus

clean:
	rm -rf .build
