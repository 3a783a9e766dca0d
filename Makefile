# schedra — the two everyday commands are `make run` and `make test`.
# Everything a fresh machine lacks (libz3-dev, cargo-fuzz) is installed here.

SHELL := /bin/bash
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN := target/release/schedra
FUZZ_TIME ?= 30s
TARGETS := v3d71 gen8 r600

.PHONY: run test deps fuzz-deps build corpus-check fuzz-short bench shaderdb fuzz coverage clean

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
	@pass=0; fail=0; \
	for f in corpus/*/*.ir corpus/*/*/*.ir; do \
	  [ -f "$$f" ] || continue; \
	  case "$$f" in corpus/bugzoo/*) continue;; esac; \
	  for ra in split graph; do for sched in topdown bottomup; do \
	    if $(BIN) verify "$$f" --ra $$ra --sched $$sched >/dev/null 2>&1; then pass=$$((pass+1)); \
	    else fail=$$((fail+1)); echo "NOT PROVEN: $$f --ra $$ra --sched $$sched"; fi; \
	  done; done; \
	done; \
	echo "corpus: $$pass proven, $$fail not proven"; \
	[ $$fail -eq 0 ]

## A short fuzz campaign on every target.
fuzz-short: build
	$(BIN) fuzz --target all --time $(FUZZ_TIME) --out fuzz-out/short

## make run: install, build, compile+verify the corpus, fuzz briefly, summarise.
run: fuzz-deps build
	@echo "== targets"; $(BIN) targets | grep -E '^[a-z0-9]+ ' || true
	@echo "== corpus (compile + verify, 4 modes each)"; $(MAKE) --no-print-directory corpus-check
	@echo "== shader-db totals"; for f in corpus/*/*.ir; do $(BIN) compile "$$f" --stats -o /dev/null; done 2>&1 | \
	  awk '{t=$$3; i[t]+=$$5; c[t]+=$$7; s[t]+=$$9; f[t]+=$$11} END {for (t in i) printf "%s: %d inst, %d cycles, %d spills, %d fills\n", t, i[t], c[t], s[t], f[t]}'
	@echo "== fuzz ($(FUZZ_TIME))"; $(BIN) fuzz --target all --time $(FUZZ_TIME) --out fuzz-out/run --json | tail -1
	@echo "== done: see README.md for the everyday commands"

## make test: every unit, property and end-to-end test.
test: deps
	$(CARGO) test --workspace --no-fail-fast

## Every benchmark (std::time harnesses; see docs/performance.md).
bench: deps
	$(CARGO) bench --workspace

## shader-db style totals, mode comparison and obligation split over the corpus.
shaderdb: build
	scripts/shaderdb.sh $(BIN)

## Overnight: every cargo-fuzz target on all cores (FUZZ_SECONDS each, default 8h).
FUZZ_SECONDS ?= 28800
fuzz: fuzz-deps
	@for t in $$(cargo fuzz list); do \
	  cargo fuzz run --sanitizer none --features libfuzzer $$t -- -fork=$$(nproc) -max_total_time=$(FUZZ_SECONDS) -ignore_crashes=1 || true; \
	done

clean:
	$(CARGO) clean
