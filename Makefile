# SPDX-License-Identifier: MIT
# crumbs: one non-recursive Makefile.
#
#   make                 build/crumbs, crumbs-gen, libcrumbs.a and .so, the layer,
#                        sample-renderer
#   make install         PREFIX=/usr/local: crumbs, the layer with its manifest,
#                        libcrumbs (static and shared), its headers, crumbs.pc,
#                        the man pages, bash and zsh completions
#   make uninstall       removes what install put there
#   make demo            the main job: report a frame's profilegpu tables
#   make deps            install the Debian packages for the build and the tests
#                        (tests/install-deps; --demo: the build and demo alone)
#   make test            build and run every test; ends with "N passed, N failed"
#   make test T=PATTERN  only the suites whose names match (tests/run-tests)
#   make bench           the speed and size benchmarks; TRACY=DIR: a CPU scope
#                        beside Tracy's ZoneScopedN too
#   make fuzz            run the fuzzers (clang's libFuzzer)
#   make SANITIZE=address,undefined test    the same under sanitizers
#   make DEVELOPER=1     warnings are errors

# The version of crumbs, in this one place. $(BUILD)/version.h carries it
# into the code (crumbs --version, the producer named in captures), and it
# is written into the layer's manifest, libcrumbs' file names and crumbs.pc.
VERSION := 1.0.0
VERSION_WORDS := $(subst ., ,$(VERSION))
VERSION_MAJOR := $(word 1,$(VERSION_WORDS))
VERSION_MINOR := $(word 2,$(VERSION_WORDS))
VERSION_PATCH := $(word 3,$(VERSION_WORDS))

CC ?= cc
PREFIX ?= /usr/local
CLANG ?= clang
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config

ifneq ($(SANITIZE),)
BUILD ?= build/sanitize
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
# Programs not built here (vkcube, glxgears) load the sanitized layer with
# the runtimes preloaded: tests/cli/layer-programs.sh.
comma := ,
SAN_RUNTIMES := $(patsubst address,asan,$(patsubst undefined,ubsan,$(patsubst thread,tsan,\
	$(subst $(comma), ,$(SANITIZE)))))
export CRUMBS_LAYER_PRELOAD := $(foreach r,$(SAN_RUNTIMES),$(shell $(CC) -print-file-name=lib$(r).so))
# A program that links the sanitized libcrumbs is built with the same
# sanitizers: tests/cli/library-consumer.sh.
export CRUMBS_SANITIZE := $(SANITIZE)
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
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) vulkan 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
VULKAN_LIBS := $(shell $(PKG_CONFIG) --libs vulkan 2>/dev/null)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

# -fPIC: the recorder also goes into the layer, a shared library.
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARNINGS) $(CFLAGS) \
	$(SAN_FLAGS) $(PKG_CFLAGS) -fPIC -MMD -MP
ALL_LDFLAGS := $(LDFLAGS) $(SAN_FLAGS)
LIBS := $(PKG_LIBS) -lm -pthread

UTIL_SRC := util/errno_text.c util/grow.c util/sbuf.c util/options.c util/file.c util/utf8.c \
	util/term.c
FORMAT_SRC := format/result.c format/crc32c.c format/format.c format/codec.c format/writer.c
TRIGGER_SRC := trigger/trigger.c trigger/answer.c
# The recorder, one concept a file, from the bottom of its call graph up
# (capture/capture_internal.h; tests/cli/layout.sh checks the order).
RECORDER_SRC := capture/common.c capture/cpu.c capture/functions.c capture/calibrate.c \
	capture/present.c capture/memory.c capture/perfquery.c capture/counters.c capture/pools.c \
	capture/store.c capture/standing.c capture/record.c capture/submit.c \
	capture/readback.c capture/profilegpu.c capture/output.c capture/frame.c \
	capture/context.c capture/namefmt.c
ANALYZE_SRC := analyze/arena.c analyze/reader.c analyze/records.c analyze/model.c analyze/counters.c \
	analyze/cpu.c analyze/pipelines.c analyze/memory.c analyze/present.c
REPORT_SRC := report/settings.c report/filter.c report/table.c report/pipelines.c report/text.c \
	report/grid.c report/verdict.c
# Statistics over runs and comparing them: the crumbs command's alone, kept
# out of libcrumbs (which reads a capture back only for its tables), so a
# program linking it statically needs no more of libm than before.
RUNS_SRC := analyze/stats.c analyze/compare.c analyze/counters_runs.c report/stats.c report/stats_counters.c report/vitals.c report/stats_present.c \
	report/diff.c report/export.c \
	report/cpu_links.c report/rows.c report/markdown.c \
	report/plot.c report/plot_frame.c report/plot_run.c report/plot_memory.c report/plot_rows.c \
	report/plot_present.c
CMDS_SRC := cmds/main.c cmds/report.c cmds/info.c cmds/trigger.c cmds/capture.c \
	cmds/stats.c cmds/diff.c cmds/export.c cmds/plot.c cmds/input.c cmds/output.c cmds/manual.c
GEN_SRC := samples/gen.c
RENDERER_SRC := samples/renderer.c samples/jobs.c
SHADERS := $(wildcard samples/shaders/*.vert samples/shaders/*.frag samples/shaders/*.comp)
SHADER_HEADERS := $(patsubst samples/shaders/%,$(BUILD)/shaders/%.h,$(SHADERS))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

CORE_SRC := $(UTIL_SRC) $(FORMAT_SRC) $(TRIGGER_SRC) $(RECORDER_SRC) $(ANALYZE_SRC) $(REPORT_SRC)
CORE_OBJ := $(call obj,$(CORE_SRC))
RUNS_OBJ := $(call obj,$(RUNS_SRC))
CRUMBS_OBJ := $(call obj,$(CMDS_SRC)) $(RUNS_OBJ) $(CORE_OBJ)
GEN_OBJ := $(call obj,$(GEN_SRC) $(FORMAT_SRC) $(UTIL_SRC))
# libcrumbs: what a program links. It loads Vulkan through the loader's
# vkGetInstanceProcAddr that the program hands it, so it needs no -lvulkan.
# Its objects are compiled once more with -fvisibility=hidden, so that only
# what crumbs.h declares CRUMBS_API is global; the archive holds one
# partially linked object in which everything else is made local, so a
# program's own now_ns or map_find never meets crumbs' (tests/cli/
# library-symbols.sh).
LIBCRUMBS := $(BUILD)/libcrumbs.a
LIBCRUMBS_SONAME := libcrumbs.so.$(VERSION_MAJOR)
LIBCRUMBS_SO := $(BUILD)/libcrumbs.so.$(VERSION)
LIBCRUMBS_LINKS := $(BUILD)/$(LIBCRUMBS_SONAME) $(BUILD)/libcrumbs.so
LIB_OBJ := $(patsubst $(BUILD)/obj/%,$(BUILD)/obj-hidden/%,$(CORE_OBJ))
OBJCOPY ?= objcopy

FUZZ_TARGETS := reader records budget trigger runs answer env cmds exports
# What a target links besides the core and the runs: the commands, with
# cmds/main.c's main() renamed (tests/fuzz/cmds_main.c), and the layer's
# readers of its environment.
FUZZ_CMDS_SRC := $(filter-out cmds/main.c,$(CMDS_SRC)) tests/fuzz/cmds_main.c
FUZZ_SRC_cmds := $(FUZZ_CMDS_SRC)
FUZZ_SRC_env := $(FUZZ_CMDS_SRC) layer/layer_env.c layer/unprofilable.c

.PHONY: all clean test bench fuzz deps demo install uninstall FORCE
LAYER := $(BUILD)/libVkLayer_crumbs.so
LAYER_JSON := $(BUILD)/VkLayer_crumbs.json
all: $(BUILD)/crumbs $(BUILD)/crumbs-gen $(LIBCRUMBS) $(LIBCRUMBS_LINKS) $(LAYER) $(LAYER_JSON) $(BUILD)/sample-renderer

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The version for the code: written on every make, but replaced only when
# it differs, so that only a new version builds again what includes it.
VERSION_H := $(BUILD)/version.h
$(VERSION_H): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '/* Generated from VERSION in the Makefile; do not edit. */' \
		'#ifndef CRUMBS_VERSION_H' '#define CRUMBS_VERSION_H' \
		'#define CRUMBS_VERSION "$(VERSION)"' \
		'#define CRUMBS_VERSION_MAJOR $(VERSION_MAJOR)' \
		'#define CRUMBS_VERSION_MINOR $(VERSION_MINOR)' \
		'#define CRUMBS_VERSION_PATCH $(VERSION_PATCH)' \
		'/* MAJOR.MINOR: what crumbs --version and the producers of captures say */' \
		'#define CRUMBS_VERSION_SHORT "$(VERSION_MAJOR).$(VERSION_MINOR)"' \
		'#endif' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# The files that include version.h.
VERSION_USERS := cmds/main.c capture/output.c samples/gen.c
VERSION_OBJ := $(call obj,$(VERSION_USERS)) $(BUILD)/obj-hidden/capture/output.o
$(VERSION_OBJ): $(VERSION_H)
$(VERSION_OBJ): ALL_CFLAGS += -I$(BUILD)

$(BUILD)/crumbs: $(CRUMBS_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# The man pages and shell completions, made by crumbs from the option
# tables and help it parses and prints with (cmds/manual.c).
MAN_COMMANDS := report info stats diff export plot capture trigger
MAN_PAGES := $(BUILD)/man/crumbs.1 $(patsubst %,$(BUILD)/man/crumbs-%.1,$(MAN_COMMANDS))
COMPLETIONS := $(BUILD)/completion/crumbs.bash $(BUILD)/completion/_crumbs
all: $(MAN_PAGES) $(COMPLETIONS)

$(BUILD)/man/crumbs.1: $(BUILD)/crumbs
	@mkdir -p $(dir $@)
	$(BUILD)/crumbs help --man >$@.tmp && mv $@.tmp $@
$(BUILD)/man/crumbs-%.1: $(BUILD)/crumbs
	@mkdir -p $(dir $@)
	$(BUILD)/crumbs help --man $* >$@.tmp && mv $@.tmp $@
$(BUILD)/completion/crumbs.bash: $(BUILD)/crumbs
	@mkdir -p $(dir $@)
	$(BUILD)/crumbs help --completion bash >$@.tmp && mv $@.tmp $@
$(BUILD)/completion/_crumbs: $(BUILD)/crumbs
	@mkdir -p $(dir $@)
	$(BUILD)/crumbs help --completion zsh >$@.tmp && mv $@.tmp $@

$(BUILD)/crumbs-gen: $(GEN_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj-hidden/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@

# CPU scopes find their thread's buffers through thread-local storage;
# with TLS descriptors, a shared library reaches it by a load where the
# default model calls __tls_get_addr, at every begin and end. Where the
# compiler takes the option (GCC on x86-64).
TLS_DIALECT := $(shell echo 'int x;' | $(CC) -mtls-dialect=gnu2 -x c -S -o - - >/dev/null 2>&1 && echo -mtls-dialect=gnu2)
$(BUILD)/obj/capture/cpu.o $(BUILD)/obj-hidden/capture/cpu.o: ALL_CFLAGS += $(TLS_DIALECT)

$(BUILD)/libcrumbs.o: $(LIB_OBJ)
	$(LD) -r -o $@.tmp $^
	$(OBJCOPY) --localize-hidden $@.tmp $@
	@rm -f $@.tmp

$(LIBCRUMBS): $(BUILD)/libcrumbs.o
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBCRUMBS_SO): $(LIB_OBJ) capture/crumbs.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(LIBCRUMBS_SONAME) -Wl,--version-script=capture/crumbs.map \
		-o $@ $(LIB_OBJ) $(LIBS)

$(LIBCRUMBS_LINKS): $(LIBCRUMBS_SO)
	ln -sf $(notdir $<) $@

# The layer: only the loader's entry points are exported, so the
# recorder inside cannot clash with a libcrumbs the program links.
LAYER_OBJ := $(call obj,layer/unprofilable.c layer/layer_env.c layer/layer_names.c layer/pipeline_id.c \
	layer/layer_devices.c layer/layer_frames.c layer/layer_record.c layer/layer_events.c layer/layer_memory.c \
	layer/layer_present.c layer/layer_features.c layer/layer.c)
$(LAYER): $(LAYER_OBJ) $(CORE_OBJ) layer/layer.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,--version-script=layer/layer.map -Wl,-Bsymbolic \
		-o $@ $(LAYER_OBJ) $(CORE_OBJ) $(LIBS)

# The manifest beside it: VK_LAYER_PATH=build finds the layer.
$(LAYER_JSON): layer/VkLayer_crumbs.json.in $(VERSION_H)
	sed -e 's|@LIBRARY@|./libVkLayer_crumbs.so|' -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|' \
		layer/VkLayer_crumbs.json.in >$@

# crumbs.pc: it Requires vulkan, since crumbs.h includes vulkan/vulkan.h;
# its Requires.private are what a program that links libcrumbs.a needs
# too (pkg-config --static).
install: $(BUILD)/crumbs $(LAYER) $(LIBCRUMBS) $(LIBCRUMBS_SO) $(MAN_PAGES) $(COMPLETIONS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(BUILD)/crumbs $(DESTDIR)$(PREFIX)/bin/crumbs
	install -m 644 $(LAYER) $(DESTDIR)$(PREFIX)/lib/libVkLayer_crumbs.so
	sed -e 's|@LIBRARY@|$(PREFIX)/lib/libVkLayer_crumbs.so|' -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|' \
		layer/VkLayer_crumbs.json.in >$(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d/VkLayer_crumbs.json
	install -m 644 $(LIBCRUMBS) $(DESTDIR)$(PREFIX)/lib/libcrumbs.a
	install -m 755 $(LIBCRUMBS_SO) $(DESTDIR)$(PREFIX)/lib/$(notdir $(LIBCRUMBS_SO))
	ln -sf $(notdir $(LIBCRUMBS_SO)) $(DESTDIR)$(PREFIX)/lib/$(LIBCRUMBS_SONAME)
	ln -sf $(LIBCRUMBS_SONAME) $(DESTDIR)$(PREFIX)/lib/libcrumbs.so
	install -m 644 include/crumbs.h include/crumbs_file.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' capture/crumbs.pc.in \
		>$(DESTDIR)$(PREFIX)/lib/pkgconfig/crumbs.pc
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(BUILD)/completion/crumbs.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/crumbs
	install -m 644 $(BUILD)/completion/_crumbs $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_crumbs

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/crumbs $(DESTDIR)$(PREFIX)/lib/libVkLayer_crumbs.so \
		$(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d/VkLayer_crumbs.json \
		$(DESTDIR)$(PREFIX)/lib/libcrumbs.a $(DESTDIR)$(PREFIX)/lib/$(notdir $(LIBCRUMBS_SO)) \
		$(DESTDIR)$(PREFIX)/lib/$(LIBCRUMBS_SONAME) $(DESTDIR)$(PREFIX)/lib/libcrumbs.so \
		$(DESTDIR)$(PREFIX)/include/crumbs.h $(DESTDIR)$(PREFIX)/include/crumbs_file.h \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/crumbs.pc \
		$(patsubst $(BUILD)/man/%,$(DESTDIR)$(PREFIX)/share/man/man1/%,$(MAN_PAGES)) \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/crumbs \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_crumbs

# Shaders become C arrays of SPIR-V words, compiled into the renderer.
$(BUILD)/shaders/%.h: samples/shaders/%
	@mkdir -p $(dir $@)
	glslangValidator -V --target-env vulkan1.1 --quiet --vn shader_$(subst .,_,$*) -o $@ $<

$(BUILD)/obj/samples/renderer.o: $(SHADER_HEADERS)
$(BUILD)/obj/samples/renderer.o: ALL_CFLAGS += -I$(BUILD)/shaders

$(BUILD)/sample-renderer: $(call obj,$(RENDERER_SRC)) $(LIBCRUMBS)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) $(VULKAN_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(RUNS_OBJ) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LIBS)

$(BUILD)/obj/tests/unit/%.o: ALL_CFLAGS += $(CMOCKA_CFLAGS)

# The tasks test sees what crumbs hands its writer through the linker.
TASKS_WRAP := $(foreach f,frame_begin frame_thread cpu_wait_begin task_begin task_state task_end \
	task_depend timeline_frame,-Wl,--wrap=crumbs_writer_$(f))
$(BUILD)/tests/test_tasks: ALL_LDFLAGS += $(TASKS_WRAP)

# The layer's own files that unit tests reach.
$(BUILD)/tests/test_layer_names: $(BUILD)/obj/layer/layer_names.o $(BUILD)/obj/layer/layer_devices.o \
	$(BUILD)/obj/layer/layer_env.o
$(BUILD)/tests/test_unprofilable: $(BUILD)/obj/layer/unprofilable.o
$(BUILD)/tests/test_pipeline_id: $(BUILD)/obj/layer/pipeline_id.o

# Tests on a Vulkan device (lavapipe without a GPU), under validation.
# They read captures back with the analyzer, which libcrumbs.a hides, so
# they link the objects.
$(BUILD)/tests/vk_%: $(BUILD)/obj/tests/vulkan/%.o $(BUILD)/obj/tests/vulkan/vkt.o $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LIBS) $(VULKAN_LIBS)

$(BUILD)/obj/tests/vulkan/%.o: ALL_CFLAGS += $(CMOCKA_CFLAGS)

# The test of pipelines' identities: its shaders (the compute shader a
# second time with the entry point gblur), and the layer it loads.
PIPELINES_SHADERS := $(addprefix $(BUILD)/shaders/pipelines_,vert.h frag.h comp.h gblur.h)
$(BUILD)/shaders/pipelines_%.h: tests/vulkan/pipelines.%
	@mkdir -p $(dir $@)
	glslangValidator -V --target-env vulkan1.1 --quiet --vn shader_pipelines_$* -o $@ $<
$(BUILD)/shaders/pipelines_gblur.h: tests/vulkan/pipelines.comp
	@mkdir -p $(dir $@)
	glslangValidator -V --target-env vulkan1.1 --quiet -e gblur --source-entrypoint main \
		--vn shader_pipelines_gblur -o $@ $<
$(BUILD)/obj/tests/vulkan/test_pipelines.o: $(PIPELINES_SHADERS)
$(BUILD)/obj/tests/vulkan/test_pipelines.o: ALL_CFLAGS += -I$(BUILD)/shaders
$(BUILD)/tests/vk_test_pipelines: | $(LAYER) $(LAYER_JSON)
# The test of pipeline statistics draws and dispatches with them too.
$(BUILD)/obj/tests/vulkan/test_counters.o: $(PIPELINES_SHADERS)
$(BUILD)/obj/tests/vulkan/test_counters.o: ALL_CFLAGS += -I$(BUILD)/shaders

# The threads test again, and the statistics test (the pieces of a run
# read on several threads cut their values' memory from one pool), each
# built whole with ThreadSanitizer.
TSAN_TEST := $(BUILD)/tests/tsan_test_threads $(BUILD)/tests/tsan_test_stats \
	$(BUILD)/tests/tsan_test_tasks
$(BUILD)/tests/tsan_test_threads: tests/vulkan/test_threads.c tests/vulkan/vkt.c
$(BUILD)/tests/tsan_test_stats: tests/unit/test_stats.c $(RUNS_SRC)
$(BUILD)/tests/tsan_test_tasks: tests/unit/test_tasks.c
$(BUILD)/tests/tsan_test_tasks: TSAN_LDFLAGS := $(TASKS_WRAP)
$(TSAN_TEST): $(CORE_SRC) $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g -fsanitize=thread $(PKG_CFLAGS) -I$(BUILD) \
		$(CMOCKA_CFLAGS) $(TSAN_LDFLAGS) -o $@ $(filter %.c,$^) $(CMOCKA_LIBS) $(LIBS) \
		$(VULKAN_LIBS)

# The fuzz targets, linked with a main() that replays a corpus, so `make
# test` runs them with any compiler.
$(BUILD)/tests/fuzz_%_replay: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay.o \
		$(RUNS_OBJ) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/fuzz_cmds_replay: $(call obj,$(FUZZ_SRC_cmds))
$(BUILD)/tests/fuzz_env_replay: $(call obj,$(FUZZ_SRC_env))
$(BUILD)/obj/tests/fuzz/cmds_main.o: $(VERSION_H)
$(BUILD)/obj/tests/fuzz/cmds_main.o: ALL_CFLAGS += -I$(BUILD)

# The main job: the sample renderer captures its third frame at full
# detail and prints the tables (on lavapipe when there is no GPU).
# The tables show each pass's pipeline statistics too, where the device
# counts them (inclusive only, to stay readable).
demo: all
	@$(BUILD)/sample-renderer --frames 5 --capture-frame 2 --capture-dir $(BUILD) \
		--settings '--counters --no-stats --no-exclusive'

# A program that knows nothing of crumbs, for the layer's tests.
TWO_DEVICES := $(BUILD)/tests/two-devices
$(TWO_DEVICES): $(BUILD)/obj/tests/layer/two_devices.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(VULKAN_LIBS)

# Another, that calls the debug label, marker and object-name functions
# without enabling their extensions, with a compute shader of its own.
CARELESS := $(BUILD)/tests/careless
$(BUILD)/shaders/careless.comp.h: tests/layer/careless.comp
	@mkdir -p $(dir $@)
	glslangValidator -V --target-env vulkan1.1 --quiet --vn shader_careless_comp -o $@ $<

$(BUILD)/obj/tests/layer/careless.o: $(BUILD)/shaders/careless.comp.h
$(BUILD)/obj/tests/layer/careless.o: ALL_CFLAGS += -I$(BUILD)/shaders

$(CARELESS): $(BUILD)/obj/tests/layer/careless.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(VULKAN_LIBS)

# Another, that records each frame's command buffer during the frame
# before, as Zink does: a render pass of many draws, with shaders of its own.
AHEAD := $(BUILD)/tests/ahead
AHEAD_SHADERS := $(BUILD)/shaders/ahead.vert.h $(BUILD)/shaders/ahead.frag.h
$(AHEAD_SHADERS): $(BUILD)/shaders/ahead.%.h: tests/layer/ahead.%
	@mkdir -p $(dir $@)
	glslangValidator -V --target-env vulkan1.1 --quiet --vn shader_ahead_$* -o $@ $<

$(BUILD)/obj/tests/layer/ahead.o: $(AHEAD_SHADERS)
$(BUILD)/obj/tests/layer/ahead.o: ALL_CFLAGS += -I$(BUILD)/shaders

$(AHEAD): $(BUILD)/obj/tests/layer/ahead.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(VULKAN_LIBS)

# A layer to stack above crumbs', of the kind that asks for vkCreateDevice
# with no instance (tests/cli/layer-neighbours.sh writes its manifest).
NEIGHBOUR := $(BUILD)/tests/neighbour/libVkLayer_crumbs_test_neighbour.so
$(NEIGHBOUR): $(BUILD)/obj/tests/layer/neighbour.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -shared -o $@ $^

# A layer to stack below crumbs', in place of a display whose presents
# are shown as a script says (tests/cli/layer-present.sh).
PRESENT_SCRIPT := $(BUILD)/tests/present_script/libVkLayer_crumbs_test_present.so
$(PRESENT_SCRIPT): $(BUILD)/obj/tests/layer/present_script.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -shared -o $@ $^ -pthread

# make test T=PATTERN runs only the suites whose short names match it and
# builds what they need; tests/run-tests holds the list of suites.
ifneq ($(filter test,$(MAKECMDGOALS)),)
TEST_NEEDS := $(shell tests/run-tests --needs $(BUILD) $(if $(T),'$(T)') 2>/dev/null)
endif
test: $(TEST_NEEDS)
	@tests/run-tests $(BUILD) $(if $(T),'$(T)')

BENCH_SCOPES := $(BUILD)/bench/scopes
$(BENCH_SCOPES): $(BUILD)/obj/tests/bench/scopes.o $(BUILD)/obj/tests/vulkan/vkt.o $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LIBS) $(VULKAN_LIBS)

BENCH_RUNFRAME := $(BUILD)/bench/runframe
$(BENCH_RUNFRAME): $(BUILD)/obj/tests/bench/runframe.o $(BUILD)/obj/tests/vulkan/vkt.o $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LIBS) $(VULKAN_LIBS)

$(BUILD)/obj/tests/bench/%.o: ALL_CFLAGS += $(CMOCKA_CFLAGS)

# A program that allocates device memory every frame: the layer's cost of
# counting allocations (tests/bench/run, part memory).
BENCH_ALLOCS := $(BUILD)/bench/allocs
$(BENCH_ALLOCS): $(BUILD)/obj/tests/bench/allocs.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(VULKAN_LIBS)

# Tracy, the peer a CPU scope is compared with: `make bench TRACY=DIR`,
# DIR holding Tracy's client, its capture server and `build`, the script
# that compiles both offline (as ../shared/peers/tracy does). They are
# built into $(BUILD)/tracy; Tracy's own files are never changed.
ifneq ($(TRACY),)
TRACY_DIR := $(abspath $(TRACY))
TRACY_OUT := $(BUILD)/tracy
BENCH_TRACY := $(BUILD)/bench/tracy-zones
$(TRACY_OUT)/tracy-capture:
	@test -x $(TRACY_DIR)/build || { echo "make bench: '$(TRACY)' has no 'build' script" \
		"to compile Tracy's client and capture server (../shared/peers/tracy has one)" >&2; \
		exit 2; }
	$(TRACY_DIR)/build $(TRACY_OUT)
$(TRACY_OUT)/TracyClient.o: $(TRACY_OUT)/tracy-capture
$(BENCH_TRACY): tests/bench/tracy_zones.cpp $(TRACY_OUT)/TracyClient.o
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -Wall -Wextra $(if $(filter 1,$(DEVELOPER)),-Werror) -DTRACY_ENABLE \
		-I$(TRACY_DIR)/public -o $@ $^ -pthread -ldl
endif

bench: all $(BENCH_SCOPES) $(BENCH_RUNFRAME) $(BENCH_ALLOCS) $(BENCH_TRACY) $(PRESENT_SCRIPT)
	@TRACY='$(TRACY)' tests/bench/run $(BUILD)

# libFuzzer needs clang; the fuzzers get their own build. FUZZ_SECONDS
# per target (default 60); FUZZ_TARGETS chooses some; new inputs go to
# build/fuzz/corpus-TARGET, and what fails to build/fuzz/ (absolute
# paths: the cmds target runs commands in a folder of its own, in TMPDIR).
# An input that runs longer than 25 s is a hang; undefined behaviour
# stops the fuzzer as a crash does, so that its input is kept too.
FUZZ_BUILD := build/fuzz
FUZZ_DIR = $(abspath $(FUZZ_BUILD))
fuzz: $(VERSION_H)
	@mkdir -p $(FUZZ_BUILD)
	@set -e; $(foreach t,$(FUZZ_TARGETS), \
		$(CLANG) -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g \
			-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
			$(PKG_CFLAGS) -I$(BUILD) \
			-o $(FUZZ_BUILD)/fuzz_$(t) tests/fuzz/fuzz_$(t).c \
			$(CORE_SRC) $(RUNS_SRC) $(FUZZ_SRC_$(t)) $(LIBS); \
		mkdir -p $(FUZZ_BUILD)/corpus-$(t) $(FUZZ_BUILD)/tmp; \
		TMPDIR=$(FUZZ_DIR)/tmp $(FUZZ_BUILD)/fuzz_$(t) -max_total_time=$${FUZZ_SECONDS:-60} \
			-max_len=65536 -timeout=25 -close_fd_mask=3 -artifact_prefix=$(FUZZ_DIR)/ \
			$(FUZZ_DIR)/corpus-$(t) $(abspath tests/fuzz/corpus/$(t));)

deps:
	@tests/install-deps

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(BUILD)/obj-hidden -name '*.d' 2>/dev/null)
