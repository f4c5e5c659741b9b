# savingsd — the two commands: `make run` and `make test`. Both install what is missing first.
SWIFT ?= swift
APT_PACKAGES := libsystemd-dev libsqlite3-dev pkg-config systemd faketime sqlite3
# The tests also render the HTML report in headless Chromium; the benchmark's smoke run times
# savingsctl against socat with hyperfine, and its peak memory with GNU time (make test).
TEST_PACKAGES := chromium-headless-shell curl hyperfine socat time python3-jsonschema
# The web view's browser tests: Playwright for Python, driving the Chromium above.
PIP_PACKAGES := playwright axe_playwright_python
# The benchmark baselines also need hledger, and strace counts system calls (make bench only).
BENCH_PACKAGES := hledger hyperfine socat strace time
BIN = $(shell $(SWIFT) build --show-bin-path)
# Release binaries link the Swift runtime and Foundation statically, with packed relative
# relocations and no $ORIGIN search path: savingsctl starts in about half the time (no shared
# libraries to look for, load and relocate; Package.swift also links savingsctl position-dependent).
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs --disable-local-rpath

.PHONY: all deps pip-deps build run test bench bench-smoke fuzz install docs clean

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
	echo "  $(BIN)/savingsctl            (this month at a glance)"; \
	echo "  or, on an empty database, explore an example: $(BIN)/savingsctl demo"; \
	echo "  echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"help\"}' | socat - UNIX-CONNECT:$$socket"; \
	echo ""
	$(BIN)/savingsd

## Build everything and run every test (unit and integration; every answer the integration tests
## receive is then checked against its method's result schema in docs/openrpc.json), the fuzz
## corpus replayed, then the benchmark smoke run, the install check and, as root, the system
## units under the machine's systemd in a namespace.
test: deps pip-deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(TEST_PACKAGES)"
	$(SWIFT) build --build-tests
	rm -f "$(BIN)/answers.jsonl"
	SAVINGSD_ANSWERS="$(BIN)/answers.jsonl" SAVINGSD_BIN_DIR="$(BIN)" $(SWIFT) test --skip-build
	Tests/schema/answers.py "$(BIN)/answers.jsonl" docs/openrpc.json
	$(BIN)/savings-fuzz all Fuzz/corpus
	Tests/browser/web.py "$(BIN)"
	$(BIN)/savings-bench --smoke
	Tests/check-install.sh
	Tests/service/units.sh

## Install missing Python packages of the tests (PyPI).
pip-deps:
	@for p in $(PIP_PACKAGES); do python3 -c "import $$p" 2>/dev/null || python3 -m pip install -q $$p \
	  || python3 -m pip install -q --break-system-packages $$p; done

## Release-build benchmarks on the full dataset (several minutes); writes BENCHMARKS.md.
## Figures are ratios to baselines measured in the same run; timing never fails the build.
bench: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_PACKAGES)"
	$(SWIFT) build $(RELEASE_FLAGS)
	$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/savings-bench --output BENCHMARKS.md

## The benchmark on a tiny dataset, to keep it working (part of make test).
bench-smoke: deps
	$(SWIFT) build
	$(BIN)/savings-bench --smoke

## libFuzzer over every surface that reads input from outside (savings-fuzz, see Fuzz/build.sh):
## each target for FUZZ_SECONDS, from the committed seeds in Fuzz/corpus/TARGET; new inputs
## collect in .build/fuzz/corpus/TARGET, crashes in .build/fuzz/findings/TARGET/. One target:
## make fuzz FUZZ_TARGETS=csv. (Leak reports at exit are the Swift runtime's metadata, hence
## detect_leaks=0.)
FUZZ_SECONDS ?= 120
FUZZ_TARGETS ?= requests rules pattern csv export blockbook esplora web multipart kraken binance coinbase simplefin
fuzz: deps
	@set -e; bin=$$(Fuzz/build.sh); failed=""; \
	for target in $(FUZZ_TARGETS); do \
	  mkdir -p .build/fuzz/corpus/$$target .build/fuzz/findings/$$target; \
	  echo "== savings-fuzz $$target for $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no "$$bin" $$target -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -print_final_stats=1 -artifact_prefix=.build/fuzz/findings/$$target/ \
	    .build/fuzz/corpus/$$target Fuzz/corpus/$$target || failed="$$failed $$target"; \
	done; \
	if [ -n "$$failed" ]; then echo "savings-fuzz found crashes in:$$failed (inputs under .build/fuzz/findings/)"; exit 1; fi

## Regenerate docs/protocol.md, docs/report-example.png and docs/web-example.png from the running
## code, and the daemon's copy of the import presets from config/import.
docs: deps pip-deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(TEST_PACKAGES)"
	$(SWIFT) build --build-tests
	SAVINGSD_UPDATE_DOCS=1 SAVINGSD_BIN_DIR="$(BIN)" $(SWIFT) test --skip-build --filter "ProtocolDocTests|ReportTests|ImportPresetTests"
	Tests/browser/web.py "$(BIN)" --screenshot docs/web-example.png

## Install the release binaries, man pages, shell completions, systemd units and snippets and
## the example configuration under $(DESTDIR)$(PREFIX).
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_CONFIG ?= release
BUILD_FLAGS = $(if $(filter release,$(BUILD_CONFIG)),$(RELEASE_FLAGS),-c $(BUILD_CONFIG))
install: deps
	$(SWIFT) build $(BUILD_FLAGS) --product savingsd
	$(SWIFT) build $(BUILD_FLAGS) --product savingsctl
	$(SWIFT) build $(BUILD_FLAGS) --product savings-web
	@set -e; release=$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path); \
	root="$(DESTDIR)$(PREFIX)"; \
	install -D -m 0755 "$$release/savingsd" "$$root/bin/savingsd"; \
	install -D -m 0755 "$$release/savingsctl" "$$root/bin/savingsctl"; \
	install -D -m 0755 "$$release/savings-web" "$$root/lib/savingsd/savings-web"; \
	mkdir -p "$$root/share/bash-completion/completions" "$$root/share/zsh/site-functions" \
	         "$$root/share/fish/vendor_completions.d" "$$root/share/man/man1"; \
	for tool in savingsd savingsctl; do \
	  "$$release/$$tool" --generate-completion-script bash > "$$root/share/bash-completion/completions/$$tool"; \
	  "$$release/$$tool" --generate-completion-script zsh > "$$root/share/zsh/site-functions/_$$tool"; \
	  "$$release/$$tool" --generate-completion-script fish > "$$root/share/fish/vendor_completions.d/$$tool.fish"; \
	done; \
	rm -rf .build/plugins/GenerateManual/outputs; \
	$(SWIFT) package plugin generate-manual --multi-page --configuration $(BUILD_CONFIG) >/dev/null 2>&1; \
	install -m 0644 .build/plugins/GenerateManual/outputs/*/*.1 "$$root/share/man/man1/"; \
	for unit in savingsd.service savingsd.socket; do \
	  sed "s|/usr/local/bin/|$(PREFIX)/bin/|g" "systemd/$$unit" > "$$unit.tmp"; \
	  install -D -m 0644 "$$unit.tmp" "$$root/lib/systemd/system/$$unit"; \
	  sed "s|%h/.local/bin/|$(PREFIX)/bin/|g" "systemd/user/$$unit" > "$$unit.tmp"; \
	  install -D -m 0644 "$$unit.tmp" "$$root/lib/systemd/user/$$unit"; \
	  rm -f "$$unit.tmp"; \
	done; \
	sed "s|%h/.local/bin/|$(PREFIX)/bin/|g" systemd/user/savings-web.service > savings-web.service.tmp; \
	install -D -m 0644 savings-web.service.tmp "$$root/lib/systemd/user/savings-web.service"; \
	rm -f savings-web.service.tmp; \
	install -D -m 0644 systemd/savingsd.sysusers "$$root/lib/sysusers.d/savingsd.conf"; \
	install -D -m 0644 systemd/savingsd.tmpfiles "$$root/lib/tmpfiles.d/savingsd.conf"; \
	install -D -m 0644 config/savingsd.toml "$$root/share/doc/savingsd/savingsd.toml.example"; \
	mkdir -p "$$root/share/doc/savingsd/import"; \
	install -m 0644 config/import/*.toml "$$root/share/doc/savingsd/import/"; \
	install -D -m 0644 README.md "$$root/share/doc/savingsd/README.md"; \
	mkdir -p "$$root/share/doc/savingsd/examples"; \
	install -m 0755 examples/savings_client.py examples/waybar-savings.sh examples/fetch-rates.sh "$$root/share/doc/savingsd/examples/"; \
	echo "installed under $$root"

clean:
	rm -rf .build
