# Makefile — the PGXS build of the extension, and the project's top-level targets.
#
#   make              the product: the extension (PGXS) and the genroc and genctl
#                     binaries (CMake, in build/)
#   make check-build  the same, plus the test suites and the benchmark, with
#                     warnings as errors (what test/run-all.sh builds)
#   make install      installs the extension into the PostgreSQL found by pg_config
#   make test         the whole test suite (test/run-all.sh)
#   make fuzz         builds the libFuzzer targets (clang, build-fuzz/) and runs each
#                     for FUZZ_SECONDS (default 60); see test/fuzz/run.sh
#
# GENROC_TESTS=ON|OFF, GENROC_WERROR=ON|OFF and GENROC_DEBUG_LEVEL=0..3, when
# given, set the CMake options of the same name (kept in build/'s cache until
# given again); GENROC_WERROR=ON also makes the C module's warnings errors.
# GENROC_UNITY=ON compiles the product libraries as unity sources (CMake's
# option of that name; test/run-all.sh's build): not kept, every `make`
# without it compiles file by file, since the module takes its core/ and
# engine/ objects differently in each (below).  Where the test command checks
# what: this build (unity, -Werror) links and tests everything; each product
# file compiling alone (its own #includes) is the Debug type of
# test/ops/build_types.sh (the `builds` suite).
#
# The extension's C module links the ASL interpreter from core/ and the engine
# from engine/ (C++), the same code the SQLite shim uses, compiled with -fPIC
# (by CMake, or here with SKIP_CXX=1).

EXTENSION   = genroc
# The version being built is genroc.control's default_version; PREVVERSION is
# the one before it, whose install script is kept frozen in extension/ (docs/operations.md
# "Upgrades").
EXTVERSION  = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" genroc.control)
PREVVERSION = 0.1
MODULE_big  = genroc
UNITY      := $(filter ON on 1 YES yes TRUE true,$(GENROC_UNITY))
CORE_SRCS   = $(sort $(wildcard core/*.cpp))
# The engine's operations (engine/, C++); its PostgreSQL adapter is the module's
# own (extension/engine_spi.c, engine_port.cpp) with the entry points of each
# area it implements (extension/definitions.c).
ENGINE_SRCS = $(sort $(wildcard engine/*.cpp))
# Every .c and .cpp file of extension/ is the module's: an area's entry points
# (extension/<area>.c) and its C calls (extension/<area>_calls.cpp) join the
# build without a line here.
EXT_C_SRCS   = $(sort $(wildcard extension/*.c))
EXT_CXX_SRCS = $(sort $(wildcard extension/*.cpp))
OBJS        = $(EXT_C_SRCS:.c=.o) $(EXT_CXX_SRCS:.cpp=.o) \
              $(if $(UNITY),,$(ENGINE_SRCS:.cpp=.o) $(CORE_SRCS:.cpp=.o))
SQL_PARTS   = $(sort $(wildcard extension/sql/*.sql))
UPGRADE     = $(EXTENSION)--$(PREVVERSION)--$(EXTVERSION).sql
UPGRADE_DELTA = extension/upgrade/$(PREVVERSION)--$(EXTVERSION).sql
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql $(UPGRADE)
# Frozen scripts: every older install script and every older upgrade step.
DATA        = $(filter-out $(DATA_built),$(wildcard extension/$(EXTENSION)--*.sql))

# A new file in sql/ or specs/ is a new test.
REGRESS     = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
BUILD       ?= build
REGRESS_OPTS = --inputdir=. --outputdir=$(BUILD)/regress
ISOLATION   = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --inputdir=. --outputdir=$(BUILD)/isolation

WERROR      = $(if $(filter ON on 1 YES yes,$(GENROC_WERROR)),-Werror)
PG_CPPFLAGS = -Icore -Iengine -DGENROC_VERSION='"$(EXTVERSION)"' -DGENROC_PREV_VERSION='"$(PREVVERSION)"'
PG_CFLAGS   = -Wall -Wextra $(WERROR) -Wno-unused-parameter -Wno-missing-field-initializers
PG_CXXFLAGS = -std=c++20 -fPIC -Wall -Wextra $(WERROR) -Wno-unused-parameter
SHLIB_LINK  = -lstdc++ -lcrypto -lpcre2-8

# No LLVM bitcode: the module's C++ is not worth inlining into JIT code, and
# a fresh machine need not have clang.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The install script is the SQL parts, in file-name order.
$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PARTS)
	cat $(SQL_PARTS) > $@

# The upgrade from PREVVERSION: the hand-written delta for tables, then every
# part again without its table statements, functions and views replaced
# (scripts/upgrade-script.sh; docs/operations.md "Upgrades").
$(UPGRADE): $(UPGRADE_DELTA) $(SQL_PARTS) scripts/upgrade-script.sh
	bash scripts/upgrade-script.sh $(EXTVERSION) $(UPGRADE_DELTA) $(SQL_PARTS) > $@

# genroc.c is compiled for this version
extension/genroc.o: genroc.control
# The module's core/ and engine/ objects are the CMake build's own when it runs
# (`make`, `make check-build`): the same sources, compiled once with -fPIC and
# copied here, instead of a second compile of every file (about a quarter of a
# cold build's CPU).  With SKIP_CXX=1 they are compiled here from the sources,
# and only those older than their source are.
# With GENROC_UNITY=ON CMake's objects are unity batches, not one per file:
# the module links CMake's two libraries whole instead (the same objects
# genroc and genctl link), and with SKIP_CXX=1 it takes them as $(BUILD) has
# them (test/run-all.sh installs that way right after its build).
ifdef UNITY
CXX_LIBS    = $(BUILD)/engine/libgenroc_engine.a $(BUILD)/core/libgenroc_core.a
SHLIB_LINK := -Wl,--whole-archive $(CXX_LIBS) -Wl,--no-whole-archive $(SHLIB_LINK)
$(shlib): $(CXX_LIBS)
ifndef SKIP_CXX
$(CXX_LIBS): cxx
endif
else ifndef SKIP_CXX
$(CORE_SRCS:.cpp=.o): core/%.o: core/%.cpp cxx
	cp $(BUILD)/core/CMakeFiles/genroc_core.dir/$*.cpp.o $@
$(ENGINE_SRCS:.cpp=.o): engine/%.o: engine/%.cpp cxx
	cp $(BUILD)/engine/CMakeFiles/genroc_engine.dir/$*.cpp.o $@
endif

# The engine's tables and headers: PGXS tracks no header, and an object
# built against an older statements.def numbers the statements differently.
$(ENGINE_SRCS:.cpp=.o) $(EXT_CXX_SRCS:.cpp=.o): $(wildcard engine/*.def engine/*.hpp)
$(EXT_CXX_SRCS:.cpp=.o) $(EXT_C_SRCS:.c=.o): $(wildcard extension/engine_*.h extension/engine_*.hpp)

CMAKE_BUILD_TYPE ?= RelWithDebInfo

CMAKE_OPTIONS = $(if $(GENROC_TESTS),-DGENROC_TESTS=$(GENROC_TESTS)) \
                $(if $(GENROC_WERROR),-DGENROC_WERROR=$(GENROC_WERROR)) \
                $(if $(GENROC_DEBUG_LEVEL),-DGENROC_DEBUG_LEVEL=$(GENROC_DEBUG_LEVEL)) \
                -DGENROC_UNITY=$(if $(UNITY),ON,OFF)

# SKIP_CXX=1 builds only the extension.
.PHONY: cxx test check-build fuzz
ifndef SKIP_CXX
all: cxx
endif
cxx:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DCMAKE_EXPORT_COMPILE_COMMANDS=ON $(CMAKE_OPTIONS) >/dev/null
	cmake --build $(BUILD) -j$$(nproc)

check-build:
	$(MAKE) all GENROC_TESTS=ON GENROC_WERROR=ON

test:
	bash test/run-all.sh

FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash test/fuzz/run.sh

installcheck: | regress-dirs
.PHONY: regress-dirs
regress-dirs:
	mkdir -p $(BUILD)/regress $(BUILD)/isolation
