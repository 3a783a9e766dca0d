# schedra — the two everyday commands are `make run` and `make test`.
# Everything a fresh machine lacks (libz3-dev, cargo-fuzz) is installed here.

SHELL := /bin/bash
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The release binary, wherever CARGO_TARGET_DIR puts it.
BIN := $(or $(CARGO_TARGET_DIR),target)/release/schedra
FUZZ_TIME ?= 30s
TARGETS := v3d71 gen8 r600

.PHONY: run test deps fuzz-deps build corpus-check fuzz-short bench shaderdb shaderdb-real fuzz coverage coverage-campaign mutants-deps mutants clean

## Install what is missing: Z3's C library (Debian libz3-dev).
deps:
	@dpkg -s libz3-dev >/dev/null 2>&1 || { \
	  echo "installing libz3-dev"; \
	  $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libz3-dev; }

## cargo-fuzz, for the libFuzzer targets (make run, make fuzz, make coverage).
fuzz-deps: deps
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked

build: deps
	$(CARGO) build --release

## Compile and verify every corpus shader on its target, in all four modes.
corpus-check: build
	scripts/shaderdb.sh $(BIN) >/dev/null && echo "corpus: every shader proven in all four modes"

## A short fuzz campaign on every target.
fuzz-short: build
	$(BIN) fuzz --target all --time $(FUZZ_TIME) --out fuzz-out/short

## make run: install, build, compile+verify the corpus in all four modes
## (shader-db tables; fails if anything is not proven), fuzz briefly.
run: fuzz-deps build
	@echo "== targets"; $(BIN) targets | grep -E '^[a-z0-9][a-z0-9-]* ' || true
	@echo "== corpus: compile + verify in all four modes, shader-db totals"; scripts/shaderdb.sh $(BIN)
	@echo "== fuzz ($(FUZZ_TIME), all targets)"; $(BIN) fuzz --target all --time $(FUZZ_TIME) --out fuzz-out/run --json | tail -1
	@echo "== done: every corpus shader proven; fuzz findings (if any) are in fuzz-out/run"

## make test: every unit, property and end-to-end test.
test: deps
	$(CARGO) test --workspace --no-fail-fast

## Every benchmark (std::time harnesses; see docs/performance.md).
bench: deps
	$(CARGO) bench --workspace

## shader-db style totals, mode comparison and obligation split over the corpus.
shaderdb: build
	scripts/shaderdb.sh $(BIN)

## shader-db over real shaders (GLSL, WGSL, SPIR-V): every complete shader of
## SHADERS lowered and compiled on every target that runs its stage, in all
## four modes, each verified; totals, the per-target lowered/proven counts,
## the reasons for what does not lower, and per-shader lines.
SHADERS ?= ../shared/real/glmark2 ../shared/real/kmscube
shaderdb-real: build
	SHADERDB_SHADERS="$(SHADERS)" scripts/shaderdb.sh $(BIN)

## Overnight: every cargo-fuzz target on all cores, FUZZ_SECONDS each
## (default 2h each, 8h for the four targets), seeded from corpus/.
FUZZ_SECONDS ?= 7200
fuzz: fuzz-deps build
	$(BIN) fuzz --write-corpus fuzz/corpus
	@for t in $$(cargo fuzz list); do \
	  cargo fuzz run --sanitizer none --features libfuzzer -O $$t fuzz/corpus/$$t -- \
	    -fork=$$(nproc) -max_total_time=$(FUZZ_SECONDS) -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
	    -timeout=60 || true; \
	done
	@ls fuzz/artifacts/*/ 2>/dev/null || echo "no crashes"

## Line coverage of compiler/ reached by the compile_verify corpus (needs llvm-tools).
HOST = $(shell rustc -vV | sed -n 's/host: //p')
LLVM_BIN = $(shell rustc --print sysroot)/lib/rustlib/$(HOST)/bin
COV_BIN = target/$(HOST)/coverage/$(HOST)/release/compile_verify
coverage: fuzz-deps build
	rustup component add llvm-tools-preview
	$(BIN) fuzz --write-corpus fuzz/corpus
	cargo fuzz coverage --sanitizer none --features libfuzzer compile_verify fuzz/corpus/compile_verify
	$(LLVM_BIN)/llvm-cov report $(COV_BIN) -instr-profile=fuzz/coverage/compile_verify/coverage.profdata \
	  $$(pwd)/compiler/src | tee fuzz/coverage/compiler.txt
	$(LLVM_BIN)/llvm-cov show -format=html -output-dir=fuzz/coverage/html $(COV_BIN) \
	  -instr-profile=fuzz/coverage/compile_verify/coverage.profdata $$(pwd)/compiler/src
	@echo "report: fuzz/coverage/compiler.txt, fuzz/coverage/html/index.html"

## Line coverage of compiler/src reached by one `schedra fuzz --target all`
## campaign of COVERAGE_TIME (default 10m) with COVERAGE_JOBS workers, built
## with -C instrument-coverage into target/coverage-campaign (needs
## llvm-tools, added by the script). Report: coverage-campaign/compiler.txt.
COVERAGE_TIME ?= 10m
COVERAGE_JOBS ?= $(shell nproc)
coverage-campaign: deps
	scripts/coverage-campaign.sh --time $(COVERAGE_TIME) --jobs $(COVERAGE_JOBS) --out coverage-campaign

## cargo-mutants, for the kill-rate measurement (make mutants).
mutants-deps: deps
	@command -v cargo-mutants >/dev/null 2>&1 || $(CARGO) install cargo-mutants --locked

## Kill rate: cargo-mutants over the compiler's scheduling, allocation,
## spilling and bundling files (MUTANTS_FILES), each mutant tested by
## fuzz/tests/campaign_clean.rs (a fixed-seed 20 s campaign on every target
## that fails on any finding, and the code-quality baseline that fails on
## any grown shader-db total). MUTANTS_SHARD (e.g. 0/8, round-robin over
## the files' mutants) runs a slice; MUTANTS_JOBS builds in parallel.
## Results: mutants.out/ (caught.txt, missed.txt, unviable.txt, timeout.txt).
MUTANTS_FILES ?= compiler/src/schedule/mod.rs $(wildcard compiler/src/allocate/*.rs) $(wildcard compiler/src/bundle/*.rs)
MUTANTS_SHARD ?=
MUTANTS_JOBS ?= 1
MUTANTS_TIMEOUT ?= 180
# The mutated copies build apart from this tree: cargo names a workspace
# crate's artifacts by its path relative to the workspace, so two trees
# sharing one target directory overwrite each other's libraries (a test
# then links another tree's compiler). With one job the copy builds in
# MUTANTS_TARGET_DIR; with more, each copy builds in its own target/.
MUTANTS_TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/mutants
MUTANTS_ENV = $(if $(filter 1,$(MUTANTS_JOBS)),CARGO_TARGET_DIR=$(MUTANTS_TARGET_DIR),env -u CARGO_TARGET_DIR)
## cargo-mutants' own baseline tests the mutated package (schedra-compiler),
## not --test-package, so the unmutated tree's campaign runs here first.
mutants: mutants-deps
	nice $(CARGO) test -p schedra-fuzz --test campaign_clean
	$(MUTANTS_ENV) nice $(CARGO) mutants -p schedra-compiler --test-package schedra-fuzz \
	  --cargo-arg=--test=campaign_clean --baseline skip $(foreach f,$(MUTANTS_FILES),-f $(f)) \
	  -j $(MUTANTS_JOBS) --timeout $(MUTANTS_TIMEOUT) --build-timeout 900 \
	  $(if $(MUTANTS_SHARD),--shard $(MUTANTS_SHARD) --sharding round-robin)

clean:
	$(CARGO) clean
