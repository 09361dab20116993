# tidesim — build, test, demo, bench, lint.
#
#   make demo     install missing Debian packages, build, run the default scenario, report it
#   make test     install missing Debian packages, build, run the whole test suite
#   make bench    build and run the benchmarks (never part of `make test`)
#   make lint     clang-format check, banned calls, no writable globals in the library
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
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(if $(WERROR),-Werror) \
	     -I. $(PKG_CFLAGS) -MMD -MP $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lcsv -lm -lpthread

GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
VERSION    := 0.1.0

# Every .c under the library folders is part of libtidesim, except the CLI entry
# and `run` (they hold the signal flag, the one writable static).
LIB_SRCS  := $(filter-out sim/cli/main.c sim/cli/cmd_run.c,$(wildcard sim/*.c sim/core/*.c sim/policy/*.c sim/driver/*.c \
               sim/cli/*.c models/*.c traces/*.c analysis/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS := $(wildcard tests/*.c tests/*/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

LIB   := $(BUILD)/libtidesim.a
BIN   := $(BUILD)/tidesim
TESTS := $(BUILD)/tests/tidesim-tests

.PHONY: all deps build demo test check-tests bench lint format clean compare

all: build

deps:
	@sh scripts/deps.sh

build: $(BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTIDESIM_VERSION='"$(VERSION)"' -DTIDESIM_GIT='"$(GIT_COMMIT)"' -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/obj/sim/cli/main.o $(BUILD)/obj/sim/cli/cmd_run.o $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(TESTS): $(TEST_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $(TEST_OBJS) $(LIB) $(CRIT_FLAGS) $(LDLIBS_ALL)

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< $(LIB) $(LDLIBS_ALL)

demo: deps
	@$(MAKE) --no-print-directory build
	@mkdir -p results
	$(BIN) run scenarios/default.yaml -o results/default.h5
	$(BIN) report results/default.h5

test: deps
	@$(MAKE) --no-print-directory check-tests

check-tests: $(TESTS) $(BIN)
	TIDESIM_BIN=$(abspath $(BIN)) $(TESTS) --jobs 2

bench: deps
	@$(MAKE) --no-print-directory $(BENCH_BINS) $(BIN)
	@sh bench/run.sh $(BUILD)

compare: deps
	@$(MAKE) --no-print-directory build
	@sh scripts/compare.sh $(BUILD)

lint: deps
	@$(MAKE) --no-print-directory $(LIB)
	@sh scripts/lint.sh $(LIB)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BUILD)/obj/sim/cli/main.d $(BUILD)/obj/sim/cli/cmd_run.d
