# tidesim — build, test, demo, bench, lint.
#
#   make demo     install missing Debian packages, build, run the default scenario, report it
#   make test     install missing Debian packages, build, run the whole test suite
#   make bench    build and run the benchmarks (never part of `make test`)
#   make lint     clang-format check, banned calls, no writable globals in the library
#   make install [PREFIX=/usr/local] [DESTDIR=]
#                 the binary, the gnuplot scripts, a man page per command (generated from
#                 the --help texts by scripts/gen_man.sh), bash completion and the
#                 default scenario (share/tidesim/scenarios/default.yaml)
#   make man      only the man pages, into $(BUILD)/man
#   make mpi      install OpenMPI if missing (scripts/deps.sh mpi) and build $(BUILD)/tidesim-mpi
#                 with mpicc: `mpirun -n R tidesim-mpi sweep|plan ...` (docs/cluster.md); the
#                 plain build never needs MPI. make test runs the MPI test when mpicc and
#                 mpirun are installed, and says it skips it otherwise.
#   make test SANITIZE=address,undefined
#                 the whole suite built with ASan/UBSan (in $(BUILD)-san), aborting on the
#                 first report; any report fails the run
#   make fuzz FUZZ_SECONDS=N
#                 build the libFuzzer harnesses of fuzz/ with clang (in $(BUILD)-fuzzer) and run
#                 each for N seconds; crash inputs are copied to tests/data/fuzz/<target>/
#
# The normal build is hardened (stack protector, _FORTIFY_SOURCE=2, PIE, full RELRO;
# docs/security.md); HARDEN=0 builds without, for comparisons.
#
# pkg-config is evaluated lazily (and once) so `make demo` on a fresh machine can
# install the packages first and then build in a sub-make.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
WERROR  ?=
PKGS    := gsl hdf5 yaml-0.1

memo = $(eval $1 := $$(shell $2))$($1)
PKG_CFLAGS = $(call memo,PKG_CFLAGS,pkg-config --cflags $(PKGS))
PKG_LIBS   = $(call memo,PKG_LIBS,pkg-config --libs $(PKGS))
CRIT_FLAGS = $(call memo,CRIT_FLAGS,pkg-config --cflags --libs criterion)

WARN    := -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes
CFLAGS  ?= $(OPT) -g

# Sanitizer and fuzz builds live in their own folder beside $(BUILD) (objects of
# different instrumentation never mix; a sibling, so the binary finds ../analysis/plots
# as build/tidesim does). FUZZ=1 is set by `make fuzz` for its sub-make.
SANITIZE ?=
FUZZ     ?=
FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2
FUZZ_CRASHES ?= tests/data/fuzz
FUZZ_TARGETS := scenario arrivals_azure arrivals_servegen arrivals_csv arrivals_counts \
		jobs_openb jobs_pai jobs_helios jobs_csv results results_answer index_answer snapshot
ifneq ($(FUZZ),)
override BUILD := $(BUILD)-fuzzer
SAN_CFLAGS  := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	       -fno-omit-frame-pointer
# -z now: the results harness forks a child per input (fuzz/targets.c), which would
# otherwise bind every libhdf5 symbol it calls again, lazily, in each child.
SAN_LDFLAGS := -fsanitize=address,undefined -Wl,-z,now
else ifneq ($(SANITIZE),)
override BUILD := $(BUILD)-san
# float-cast-overflow: clang's `undefined` has it, gcc's does not.
SAN_CFLAGS  := -fsanitize=$(SANITIZE) $(if $(findstring undefined,$(SANITIZE)),-fsanitize=float-cast-overflow) \
	       -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_LDFLAGS := $(SAN_CFLAGS)
endif
# Where sanitizer reports go (one file per process), and how the runtimes behave:
# abort on the first report, so no test can mistake one for an expected failure.
SAN_LOG  = $(abspath $(BUILD))/sanitizer-logs
SAN_ENV  = ASAN_OPTIONS=abort_on_error=1:halt_on_error=1:detect_leaks=1:strict_string_checks=1:log_path=$(SAN_LOG)/asan \
	   LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	   UBSAN_OPTIONS=abort_on_error=1:halt_on_error=1:print_stacktrace=1:log_path=$(SAN_LOG)/ubsan

# Hardening of the normal build (docs/security.md); not of sanitizer and fuzz
# builds, whose runtimes intercept the same calls. _FORTIFY_SOURCE needs an
# optimising build.
HARDEN  ?= 1
HARDENED = $(if $(SAN_CFLAGS),,$(filter 1,$(HARDEN)))
HARDEN_CFLAGS  = $(if $(HARDENED),-fstack-protector-strong -fPIE \
		   $(if $(filter -O0,$(OPT)),,-D_FORTIFY_SOURCE=2))
HARDEN_LD := -pie -Wl,-z,relro,-z,now
HARDEN_LDFLAGS = $(if $(HARDENED),$(HARDEN_LD))

ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(if $(WERROR),-Werror) \
	     -I. $(PKG_CFLAGS) -MMD -MP $(HARDEN_CFLAGS) $(SAN_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(HARDEN_LDFLAGS) $(SAN_LDFLAGS) $(LDFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lcsv -lm -lpthread

GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
VERSION    := 0.1.0

# Every .c under the library folders is part of libtidesim, except the CLI entry
# `run`, `sweep` and `plan` (they hold or use the signal flags, the only writable statics),
# and the MPI entry of `make mpi`.
LIB_SRCS  := $(filter-out sim/cli/main.c sim/cli/cmd_run.c sim/cli/cmd_sweep.c sim/cli/cmd_plan.c sim/cli/mpi_main.c,$(wildcard sim/*.c sim/core/*.c sim/policy/*.c sim/driver/*.c \
               sim/cli/*.c models/*.c traces/*.c analysis/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS := $(filter-out tests/oom/failmalloc.c,$(wildcard tests/*.c tests/*/*.c))
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

# The fuzz entry points are linked into the test binary too: it replays tests/data/fuzz/.
FUZZ_OBJ  := $(BUILD)/obj/fuzz/targets.o
FUZZ_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzzers/%)

LIB   := $(BUILD)/libtidesim.a
BIN   := $(BUILD)/tidesim
TESTS := $(BUILD)/tests/tidesim-tests
# The allocator that fails on purpose, preloaded by the out-of-memory tests (tests/cli/test_oom.c).
FAILMALLOC := $(BUILD)/tests/failmalloc.so

.PHONY: all deps deps-fuzz deps-mpi build demo test check-tests bench lint format clean compare \
	fuzz fuzz-build fuzz-run install man mpi mpi-if-present oom

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
DATADIR  = $(PREFIX)/share
MANDIR   = $(DATADIR)/man/man1
COMPDIR  = $(DATADIR)/bash-completion/completions

all: build

deps:
	@sh scripts/deps.sh

deps-fuzz:
	@sh scripts/deps.sh fuzz

deps-mpi:
	@sh scripts/deps.sh mpi

build: $(BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTIDESIM_VERSION='"$(VERSION)"' -DTIDESIM_GIT='"$(GIT_COMMIT)"' -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

CLI_OBJS := $(BUILD)/obj/sim/cli/cmd_run.o $(BUILD)/obj/sim/cli/cmd_sweep.o $(BUILD)/obj/sim/cli/cmd_plan.o

$(BIN): $(BUILD)/obj/sim/cli/main.o $(CLI_OBJS) $(LIB)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

# tidesim-mpi: the same CLI objects, mpi_main.c compiled with mpicc (OpenMPI's wrapper adds
# its include and library flags), linked with mpicc.
MPICC   ?= mpicc
MPI_BIN := $(BUILD)/tidesim-mpi

mpi: deps-mpi
	@$(MAKE) --no-print-directory $(MPI_BIN)

$(BUILD)/obj-mpi/sim/cli/mpi_main.o: sim/cli/mpi_main.c
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_CFLAGS) -DTIDESIM_VERSION='"$(VERSION)"' -DTIDESIM_GIT='"$(GIT_COMMIT)"' -c $< -o $@

$(MPI_BIN): $(BUILD)/obj-mpi/sim/cli/mpi_main.o $(CLI_OBJS) $(LIB)
	$(MPICC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

# For make test: build tidesim-mpi when OpenMPI is there (not in sanitizer builds, whose
# leak checker would report OpenMPI's own allocations), else say the MPI test is skipped.
# It needs the library and CLI objects first: its sub-make must not build them while this
# make does (with -j2 both wrote build/libtidesim.a at once: "file truncated").
mpi-if-present: $(LIB) $(CLI_OBJS)
	@if [ -z "$(SANITIZE)" ] && command -v $(MPICC) >/dev/null 2>&1 && \
	    command -v mpirun >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(MPI_BIN); \
	else \
	  echo "tidesim: OpenMPI (mpicc, mpirun) not installed$(if $(SANITIZE), or a sanitizer build,): the MPI sweep test will be skipped (make mpi installs it)" >&2; \
	fi

$(TESTS): $(TEST_OBJS) $(FUZZ_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(TEST_OBJS) $(FUZZ_OBJ) $(LIB) $(CRIT_FLAGS) $(LDLIBS_ALL)

$(FAILMALLOC): tests/oom/failmalloc.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -fPIC -shared -o $@ $<

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS_ALL)

# One libFuzzer binary per target of fuzz/targets.c (FUZZ=1 builds only).
$(BUILD)/fuzzers/%: fuzz/driver.c $(FUZZ_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -DFUZZ_TARGET='"$*"' -o $@ $< $(FUZZ_OBJ) $(LIB) \
	  $(LDLIBS_ALL)

demo: deps
	@$(MAKE) --no-print-directory build
	@mkdir -p results
	$(BIN) run scenarios/default.yaml -o results/default.h5
	$(BIN) report results/default.h5
	@# The README's CI gate, on the shipped scenario (replicated, as the README runs it).
	$(BIN) run scenarios/default.yaml -o results/default-r3.h5 --replications 3 --quiet
	$(BIN) check results/default-r3.h5 --min-util 0.6 --min-slo 0.99 --max-p99-ms 250 \
	    --max-ckpt-overhead 5%

test: deps
	@sh scripts/deps.sh browser || echo "tidesim: chromium not installed: the HTML report's browser test will be skipped" >&2
	@$(MAKE) --no-print-directory check-tests

ifeq ($(SANITIZE),)
check-tests: $(TESTS) $(BIN) $(FAILMALLOC) mpi-if-present
	TIDESIM_BIN=$(abspath $(BIN)) TIDESIM_MPI_BIN=$(abspath $(MPI_BIN)) \
	  TIDESIM_FAILMALLOC=$(abspath $(FAILMALLOC)) $(TESTS) --jobs 2

# Out-of-memory testing of every allocation (make test tries about 100 per command).
oom: deps
	@$(MAKE) --no-print-directory $(TESTS) $(BIN) $(FAILMALLOC)
	TIDESIM_BIN=$(abspath $(BIN)) TIDESIM_FAILMALLOC=$(abspath $(FAILMALLOC)) TIDESIM_OOM_ALL=1 \
	  $(TESTS) --jobs 2 --filter 'oom/*' --verbose
else
# Every sanitizer report lands in $(SAN_LOG) whatever the test did with stderr;
# any report fails the run even when the test that caused it passed.
check-tests: $(TESTS) $(BIN) mpi-if-present
	@rm -rf $(SAN_LOG) && mkdir -p $(SAN_LOG)
	$(SAN_ENV) TIDESIM_BIN=$(abspath $(BIN)) $(TESTS) --jobs 2; rc=$$?; \
	if [ -n "$$(ls -A $(SAN_LOG))" ]; then \
	  for f in $(SAN_LOG)/*; do echo "== $$f"; cat "$$f"; done; \
	  echo "make test SANITIZE=$(SANITIZE): sanitizer reports above (in $(SAN_LOG))" >&2; exit 1; \
	fi; exit $$rc
endif

# Fuzzing: clang with libFuzzer, ASan and UBSan, in $(BUILD)-fuzzer.
fuzz: deps-fuzz
	@$(MAKE) --no-print-directory FUZZ=1 CC=$(FUZZ_CC) fuzz-run

fuzz-build: $(FUZZ_BINS) $(BIN)

fuzz-run: fuzz-build
	@bash fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_CRASHES) $(FUZZ_TARGETS)

bench: deps
	@$(MAKE) --no-print-directory $(BENCH_BINS) $(BIN)
	@sh bench/run.sh $(BUILD)

compare: deps
	@$(MAKE) --no-print-directory build
	@sh scripts/compare.sh $(BUILD)

lint: deps
	@$(MAKE) --no-print-directory $(LIB)
	@sh scripts/lint.sh $(LIB)

# Man pages from the binary's own --help texts (no help2man needed).
man: $(BIN)
	@rm -rf $(BUILD)/man
	sh scripts/gen_man.sh $(BIN) $(BUILD)/man $(VERSION)

# The binary finds its plot scripts in <bindir>/../share/tidesim/plots (analysis/plot.c).
install: man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/tidesim/plots $(DESTDIR)$(MANDIR) \
	  $(DESTDIR)$(COMPDIR) $(DESTDIR)$(DATADIR)/tidesim/scenarios
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/tidesim
	install -m 644 analysis/plots/*.gp $(DESTDIR)$(DATADIR)/tidesim/plots/
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/
	install -m 644 completion/tidesim.bash $(DESTDIR)$(COMPDIR)/tidesim
	install -m 644 scenarios/default.yaml $(DESTDIR)$(DATADIR)/tidesim/scenarios/

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD)-san $(BUILD)-fuzzer

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(FUZZ_OBJ:.o=.d) $(BUILD)/obj/sim/cli/main.d \
	 $(BUILD)/obj/sim/cli/cmd_run.d $(BUILD)/obj/sim/cli/cmd_sweep.d $(BUILD)/obj/sim/cli/cmd_plan.d \
	 $(BUILD)/obj-mpi/sim/cli/mpi_main.d
