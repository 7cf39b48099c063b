# crumbs: one non-recursive Makefile.
#
#   make                 build/crumbs and build/crumbs-gen
#   make demo            the main job: report a frame's profilegpu tables
#   make deps            install the Debian packages (tests/install-deps)
#   make test            build and run every test; ends with "N passed, N failed"
#   make bench           the speed and size benchmarks
#   make fuzz            run the fuzzers (clang's libFuzzer)
#   make SANITIZE=address,undefined test    the same under sanitizers
#   make DEVELOPER=1     warnings are errors

CC ?= cc
CLANG ?= clang
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config

ifneq ($(SANITIZE),)
BUILD ?= build/sanitize
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SAN_FLAGS :=
endif

WARNINGS := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wwrite-strings \
	-Wformat=2 -Wundef -Wvla -fno-common
ifeq ($(DEVELOPER),1)
WARNINGS += -Werror
endif

PKGS := libzstd libpcre2-8 libutf8proc
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARNINGS) $(CFLAGS) \
	$(SAN_FLAGS) $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS) $(SAN_FLAGS)
LIBS := $(PKG_LIBS) -lm -pthread

CAPTURE_SRC := capture/result.c capture/crc32c.c capture/format.c capture/writer.c
ANALYZE_SRC := analyze/arena.c analyze/reader.c analyze/model.c
REPORT_SRC := report/settings.c report/filter.c report/table.c report/text.c
CMDS_SRC := cmds/main.c cmds/report.c cmds/info.c
GEN_SRC := samples/gen.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

CORE_OBJ := $(call obj,$(CAPTURE_SRC) $(ANALYZE_SRC) $(REPORT_SRC))
CRUMBS_OBJ := $(call obj,$(CMDS_SRC)) $(CORE_OBJ)
GEN_OBJ := $(call obj,$(GEN_SRC) $(CAPTURE_SRC))

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
FUZZ_TARGETS := reader records
FUZZ_REPLAY := $(patsubst %,$(BUILD)/tests/fuzz_%_replay,$(FUZZ_TARGETS))

.PHONY: all clean test bench fuzz deps demo
all: $(BUILD)/crumbs $(BUILD)/crumbs-gen

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/crumbs: $(CRUMBS_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/crumbs-gen: $(GEN_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LIBS)

$(BUILD)/obj/tests/unit/%.o: ALL_CFLAGS += $(CMOCKA_CFLAGS)

# The fuzz targets, linked with a main() that replays a corpus, so `make
# test` runs them with any compiler.
$(BUILD)/tests/fuzz_%_replay: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay.o $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Until a program can be captured, the demo reports a generated capture:
# one frame of a deferred renderer on two GPUs.
demo: all
	@$(BUILD)/crumbs-gen -o $(BUILD)/demo.crumbs --frames 1
	@$(BUILD)/crumbs report $(BUILD)/demo.crumbs

test: all $(UNIT_TESTS) $(FUZZ_REPLAY)
	@tests/run-tests $(BUILD)

bench: all
	@tests/bench/run $(BUILD)

# libFuzzer needs clang; the fuzzers get their own build. FUZZ_SECONDS
# per target (default 60); new inputs go to build/fuzz/corpus-TARGET.
FUZZ_BUILD := build/fuzz
fuzz:
	@mkdir -p $(FUZZ_BUILD)
	@for t in $(FUZZ_TARGETS); do \
		$(CLANG) -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g \
			-fsanitize=fuzzer,address,undefined $(PKG_CFLAGS) \
			-o $(FUZZ_BUILD)/fuzz_$$t tests/fuzz/fuzz_$$t.c \
			$(CAPTURE_SRC) $(ANALYZE_SRC) $(REPORT_SRC) $(LIBS) || exit 1; \
		mkdir -p $(FUZZ_BUILD)/corpus-$$t; \
		$(FUZZ_BUILD)/fuzz_$$t -max_total_time=$${FUZZ_SECONDS:-60} -max_len=65536 \
			$(FUZZ_BUILD)/corpus-$$t tests/fuzz/corpus/$$t || exit 1; \
	done

deps:
	@tests/install-deps

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
