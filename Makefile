# blue — top-level build. Out of tree under build/ (build-san/ with SAN=1).
#   make            build everything
#   make deps       install missing Debian packages (idempotent)
#   make test       deps + build + every test        (SAN=1: under ASan+UBSan)
#   make demo       deps + build + the main demo
#   make bench      deps + build + benchmarks
#   make fuzz       every fuzz target for FUZZ_SECONDS each (default 60)
#   make install PREFIX=/usr/local
#   V=1             show full commands
.DELETE_ON_ERROR:
.SUFFIXES:
# keep objects that only feed a pattern-chain (tools, test programs)
.SECONDARY:
.DEFAULT_GOAL := all

SAN ?= 0
ifeq ($(SAN),1)
B ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
B ?= build
SANFLAGS :=
endif

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH_INC := -I/usr/include/$(shell uname -m)-linux-gnu

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

SOVER    := 0
VERSION  := 0.1.0
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -fPIC -D_GNU_SOURCE $(SANFLAGS)
CPPFLAGS += -Iinclude -I. -I$(B) -MMD -MP
LDFLAGS  += $(SANFLAGS)
LDLIBS   := -lxdp -lbpf -lelf -lz -lisal -lpthread
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -Iinclude $(ARCH_INC) -MMD -MP

# --- sources ------------------------------------------------------------------
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
BPF_OBJS    := $(BPF_SRCS:bpf/%.bpf.c=$(B)/bpf/%.bpf.o)
SKELS       := $(BPF_SRCS:bpf/%.bpf.c=$(B)/bpf/%.skel.h)
LIB_SRCS    := $(wildcard runtime/*.c afxdp_hal/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(B)/obj/%.o)
LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(LOADER_SRCS:%.c=$(B)/obj/%.o)
TOOL_SRCS   := $(wildcard tools/*.c)
# bluectl is several files, tools/bluectl/*.c, linked into one binary (rule below)
BLUECTL_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tools/bluectl/*.c))
# perftest-style benchmarks: tools/perf/perf_*.c is their shared core, and every other
# tools/perf/X.c is one program, $(B)/bin/blue_X (blue_write_bw, blue_read_lat, ...)
PERF_CORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tools/perf/perf_*.c))
PERF_BINS   := $(patsubst tools/perf/%.c,$(B)/bin/blue_%,\
		$(filter-out tools/perf/perf_%,$(wildcard tools/perf/*.c)))
# helpers shared by the tools and tests/bench (tools/common/*.c), an archive
TCOMMON_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tools/common/*.c))
TCOMMON_A   := $(B)/lib/libbluetoolcommon.a
TOOLS       := $(sort $(TOOL_SRCS:tools/%.c=$(B)/bin/%) $(B)/bin/bluectl $(PERF_BINS))
UNIT_SRCS   := $(wildcard tests/unit/*.c)
UNIT_OBJS   := $(UNIT_SRCS:%.c=$(B)/obj/%.o)
XDPT_SRCS   := $(wildcard tests/xdp/*.c)
XDPT_OBJS   := $(XDPT_SRCS:%.c=$(B)/obj/%.o)
# helpers shared by the test binaries (pcap reader, ...)
TLIB_SRCS   := $(wildcard tests/lib/*.c)
TLIB_OBJS   := $(TLIB_SRCS:%.c=$(B)/obj/%.o)
LIBTEST_A   := $(B)/lib/libbluetest.a
# standalone test programs: one binary per file
TPROG_SRCS  := $(wildcard tests/netns/*.c tests/oracle/*.c tests/bench/*.c)
TPROGS      := $(TPROG_SRCS:tests/%.c=$(B)/tests/%)

LIBBLUE_A   := $(B)/lib/libblue.a
LIBBLUE_SO  := $(B)/lib/libblue.so.$(SOVER)
LIBLOADER_A := $(B)/lib/libblueloader.a
UNIT_BIN    := $(B)/tests/unit
# libibverbs compatibility (compat/): libibverbs.so.1 over libblue.a, and provider stubs
COMPAT_SRCS := $(filter-out compat/stubs_%.c,$(wildcard compat/*.c))
COMPAT_OBJS := $(COMPAT_SRCS:%.c=$(B)/obj/%.o)
COMPAT_LIBS := $(B)/compat/libibverbs.so.1 $(B)/compat/librdmacm.so.1 \
               $(B)/compat/libmlx5.so.1 $(B)/compat/libefa.so.1
XDPT_BIN    := $(B)/tests/xdp

.PHONY: all deps test demo bench install clean fuzz fuzz-merge fuzz-seeds compat vectors
all: $(BPF_OBJS) $(SKELS) $(LIBBLUE_A) $(LIBBLUE_SO) $(LIBLOADER_A) $(TOOLS) \
     $(if $(UNIT_SRCS),$(UNIT_BIN)) $(if $(XDPT_SRCS),$(XDPT_BIN)) $(TPROGS) compat

deps:
	$(Q)bash scripts/deps.sh

test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) SAN=$(SAN) bash tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) bash scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) bash tests/bench/run.sh

# the golden rxe captures in tests/vectors/rxe, from two rxe guests (a developer step)
vectors: deps
	$(Q)B=$(B) bash tests/interop/capture_vectors.sh

# --- BPF ----------------------------------------------------------------------
$(B)/bpf/%.bpf.o: bpf/%.bpf.c | $(B)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(B)/bpf/%.skel.h: $(B)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

# --- userspace ----------------------------------------------------------------
# Anything may include a skeleton, so every user object waits for them.
$(B)/obj/%.o: %.c $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIBBLUE_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBBLUE_SO): $(LIB_OBJS) runtime/libblue.map
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libblue.so.$(SOVER) \
		-Wl,--version-script=runtime/libblue.map -o $@ $(LIB_OBJS) $(LDLIBS)
	$(Q)ln -sf libblue.so.$(SOVER) $(B)/lib/libblue.so

# The compat library carries libblue inside (static), so it needs nothing but the
# system libraries: LD_LIBRARY_PATH=$(B)/compat is all an unmodified program needs.
compat: $(COMPAT_LIBS)

$(B)/compat/libibverbs.so.1: $(COMPAT_OBJS) $(LIBBLUE_A) compat/libibverbs.map
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libibverbs.so.1 -Wl,-z,defs \
		-Wl,--version-script=compat/libibverbs.map -o $@ $(COMPAT_OBJS) $(LIBBLUE_A) $(LDLIBS)
	$(Q)ln -sf libibverbs.so.1 $(B)/compat/libibverbs.so

# each stand-in is compat/stubs_LIB.c and its parts compat/stubs_LIB_*.c
stub_objs = $(patsubst %.c,$(B)/obj/%.o,$(wildcard compat/stubs_$(1).c compat/stubs_$(1)_*.c))
$(B)/compat/libmlx5.so.1: $(call stub_objs,mlx5)
$(B)/compat/libefa.so.1: $(call stub_objs,efa)
$(B)/compat/lib%.so.1: $(B)/obj/compat/stubs_%.o compat/lib%.map
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,lib$*.so.1 -Wl,-z,defs \
		-Wl,--version-script=compat/lib$*.map -o $@ $(filter %.o,$^)

# librdmacm.so.1 (compat/rdmacm/cma.h): the rdma_cm API and the CM agent, over our
# libibverbs.so.1 (every verbs object through ibv_*), with the pure IB CM objects of
# libblue.a (ibcm, cm_mad, log: an archive gives only what is referenced); what is
# still a stand-in stays in compat/stubs_rdmacm*.c
RDMACM_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard compat/rdmacm/*.c)) $(call stub_objs,rdmacm)
$(B)/compat/librdmacm.so.1: $(RDMACM_OBJS) $(LIBBLUE_A) $(B)/compat/libibverbs.so.1 compat/librdmacm.map
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,librdmacm.so.1 -Wl,-z,defs \
		-Wl,--version-script=compat/librdmacm.map -o $@ $(RDMACM_OBJS) $(LIBBLUE_A) \
		$(B)/compat/libibverbs.so.1 -lpthread
# the CM agent's other files, for tests/compat/cm_agent_probe (its rule is below)
$(B)/tests/compat/cm_agent_probe: $(B)/obj/compat/rdmacm/agent_ah.o \
				  $(B)/obj/compat/rdmacm/agent_qp.o \
				  $(B)/obj/compat/rdmacm/dev_gids.o

$(LIBLOADER_A): $(LOADER_OBJS)
	@mkdir -p $(@D)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(TCOMMON_A): $(TCOMMON_OBJS)
	@mkdir -p $(@D)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/bin/%: $(B)/obj/tools/%.o $(TCOMMON_A) $(LIBLOADER_A) $(LIBBLUE_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/bin/bluectl: $(BLUECTL_OBJS) $(LIBLOADER_A) $(LIBBLUE_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(PERF_BINS): $(B)/bin/blue_%: $(B)/obj/tools/perf/%.o $(PERF_CORE_OBJS) $(TCOMMON_A) \
	      $(LIBBLUE_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm

$(LIBTEST_A): $(TLIB_OBJS)
	@mkdir -p $(@D)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# the compat objects too: tests/unit/test_compat_*.c drive the verbs layer in-process;
# and bluectl's HTTP request parser (tests/unit/test_http_req.c) and QP field table
# (tests/unit/test_bluectl_qpfields.c)
BLUECTL_UNIT_OBJS := $(patsubst %,$(B)/obj/tools/bluectl/%.o,http_req qpfields json snap)
$(UNIT_BIN): $(UNIT_OBJS) $(LIBTEST_A) $(COMPAT_OBJS) $(BLUECTL_UNIT_OBJS) $(LIBLOADER_A) \
	     $(LIBBLUE_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcriterion

$(XDPT_BIN): $(XDPT_OBJS) $(LIBTEST_A) $(LIBLOADER_A) $(LIBBLUE_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcriterion

$(B)/tests/%: $(B)/obj/tests/%.o $(LIBTEST_A) $(TCOMMON_A) $(LIBLOADER_A) $(LIBBLUE_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# tests/compat/aw_flush.c: a verbs program against Debian's libibverbs headers (not
# libblue's), run on $(B)/compat by tests/compat/test_compat_aw.sh
all: $(B)/tests/compat/aw_flush
$(B)/tests/compat/aw_flush: $(B)/obj/tests/compat/aw_flush.o
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs

# tests/compat/rai_probe.c: a librdmacm probe against Debian's headers, run on rdma-core's
# librdmacm and on $(B)/compat's by tests/compat/test_rdmacm_ud.sh
all: $(B)/tests/compat/rai_probe
$(B)/tests/compat/rai_probe: $(B)/obj/tests/compat/rai_probe.o
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lrdmacm

# tests/compat/mc_probe.c: rdma_join/leave_multicast and the JOIN event, with librdmacm +
# libibverbs calls only, run on $(B)/compat's by tests/compat/test_rdmacm_mcast.sh
all: $(B)/tests/compat/mc_probe
$(B)/tests/compat/mc_probe: $(B)/obj/tests/compat/mc_probe.o
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lrdmacm -libverbs

# tests/compat/cm_fail_probe.c: rdma_cm failure cases (reject with private data, a
# server killed mid-handshake, disconnects under traffic, relisten) with librdmacm +
# libibverbs calls only, run on $(B)/compat's by tests/compat/test_rdmacm_stress.sh
all: $(B)/tests/compat/cm_fail_probe
$(B)/tests/compat/cm_fail_probe: $(B)/obj/tests/compat/cm_fail_probe.o
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lrdmacm -libverbs

# tests/compat/cm_agent_probe.c: the CM agent (compat/rdmacm/agent.c, lock.c) alone, with
# the probe's own cma_ibcm_event, over our libibverbs.so.1 (run with $(B)/compat on
# LD_LIBRARY_PATH) and libblue.a's pure IB CM objects; tests/compat/test_cm_agent.sh
all: $(B)/tests/compat/cm_agent_probe
$(B)/tests/compat/cm_agent_probe: $(B)/obj/tests/compat/cm_agent_probe.o \
				  $(B)/obj/compat/rdmacm/agent.o $(B)/obj/compat/rdmacm/lock.o \
				  $(LIBBLUE_A) $(B)/compat/libibverbs.so.1
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -Wl,-z,defs -o $@ $(filter %.o,$^) $(LIBBLUE_A) \
		$(B)/compat/libibverbs.so.1 -lpthread

$(B)/bpf:
	@mkdir -p $@

# --- fuzzing ------------------------------------------------------------------
# libFuzzer (clang, libclang-rt-14-dev) with ASan+UBSan. Every tests/fuzz/fuzz_NAME.c is
# one target, $(B)/fuzz/fuzz_NAME: the harness and every library source built with the
# same sanitizer flags under $(B)/fuzz/, plus the sources a target lists in
# FUZZ_EXTRA_fuzz_NAME (tools code that libblue does not hold). `make fuzz` runs each
# target for FUZZ_SECONDS on $(B)/fuzz/corpus/NAME, seeded from tests/fuzz/corpus/NAME
# (never written back; `make fuzz-merge` adds what a run found to the tree's corpus).
# FUZZ_TARGETS=NAME... runs some of them.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -g -O1 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(B)/fuzz/obj/%.o)
FUZZ_ALL     := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_FLAGS   := -timeout=10 -max_len=4096 -len_control=0
FUZZ_EXTRA_fuzz_http := tools/bluectl/http_req.c
# the receive-path fuzzers share their world (tests/fuzz/world.h)
FUZZ_EXTRA_fuzz_rx  := tests/fuzz/world.c
FUZZ_EXTRA_fuzz_seq := tests/fuzz/world.c

$(B)/fuzz/obj/%.o: %.c $(SKELS)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# (a function, not an inline patsubst: make puts the stem in for every % of a pattern
# rule's prerequisites before the second expansion, so "%.c" there would read "http.c")
fuzz_extra_objs = $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_EXTRA_fuzz_$(1)))
.SECONDEXPANSION:
$(B)/fuzz/fuzz_%: $(B)/fuzz/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJS) \
		$$(call fuzz_extra_objs,$$*)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

$(B)/fuzz/gen_seeds: $(B)/obj/tests/fuzz/gen_seeds.o $(LIBTEST_A) $(LIBBLUE_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		echo "== fuzz_$$t: $(FUZZ_SECONDS) s"; \
		mkdir -p $(B)/fuzz/corpus/$$t; \
		if [ -d tests/fuzz/corpus/$$t ]; then cp -f tests/fuzz/corpus/$$t/* $(B)/fuzz/corpus/$$t/ 2>/dev/null || true; fi; \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(B)/fuzz/fuzz_$$t \
			-max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) -print_final_stats=1 \
			-artifact_prefix=$(B)/fuzz/fuzz_$$t- $(B)/fuzz/corpus/$$t; \
	done

# Add to the tree's corpus the inputs of the last `make fuzz` that reach new coverage
# (libFuzzer -merge=1 keeps the smallest set; the tree's files stay).
fuzz-merge: $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p tests/fuzz/corpus/$$t $(B)/fuzz/corpus/$$t; \
		$(B)/fuzz/fuzz_$$t -merge=1 tests/fuzz/corpus/$$t $(B)/fuzz/corpus/$$t; \
	done

$(B)/fuzz/gen_cm_seeds: $(B)/obj/tests/fuzz/gen_cm_seeds.o $(LIBBLUE_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Rewrite the seed corpora in the tree (rx: templates per opcode, rxe captures; cm).
fuzz-seeds: $(B)/fuzz/gen_seeds $(B)/fuzz/gen_cm_seeds
	$(Q)$(B)/fuzz/gen_seeds tests/fuzz/corpus/rx
	$(Q)mkdir -p tests/fuzz/corpus/cm && $(B)/fuzz/gen_cm_seeds tests/fuzz/corpus/cm

# --- install ------------------------------------------------------------------
install: $(LIBBLUE_A) $(LIBBLUE_SO) $(B)/bin/bluectl $(B)/bin/blue-manager
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(INCDIR)/blue $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(UNITDIR)
	$(Q)install -m 644 include/blue/*.h $(DESTDIR)$(INCDIR)/blue/
	$(Q)install -m 644 $(LIBBLUE_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(LIBBLUE_SO) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libblue.so.$(SOVER) $(DESTDIR)$(LIBDIR)/libblue.so
	$(Q)install -m 755 $(B)/bin/bluectl $(B)/bin/blue-manager $(DESTDIR)$(BINDIR)/
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|g' scripts/systemd/blue-manager@.service.in \
		> $(DESTDIR)$(UNITDIR)/blue-manager@.service
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		blue.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/blue.pc

clean:
	$(call msg,CLEAN,build)
	$(Q)rm -rf build build-san

-include $(shell find $(B) -name '*.d' 2>/dev/null)
