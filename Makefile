# Makefile — the PGXS build of the extension, and the project's top-level targets.
#
#   make            the extension (PGXS) and the C++ binaries and tests (CMake, in build/)
#   make install    installs the extension into the PostgreSQL found by pg_config
#   make test       the whole test suite (test/run-all.sh)
#   make fuzz       builds the libFuzzer targets (clang, build-fuzz/) and runs each
#                   for FUZZ_SECONDS (default 60); see test/fuzz/run.sh
#
# The extension's C module links the ASL interpreter from core/ (C++), the same
# code the SQLite shim uses; it is compiled here with -fPIC for the module.

EXTENSION   = genroc
EXTVERSION  = 0.1
MODULE_big  = genroc
CORE_SRCS   = $(sort $(wildcard core/*.cpp))
OBJS        = extension/genroc.o $(CORE_SRCS:.cpp=.o)
SQL_PARTS   = $(sort $(wildcard extension/sql/*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql
DATA        = $(filter-out $(DATA_built),$(wildcard extension/$(EXTENSION)--*--*.sql))

# A new file in sql/ or specs/ is a new test.
REGRESS     = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
BUILD       ?= build
REGRESS_OPTS = --inputdir=. --outputdir=$(BUILD)/regress
ISOLATION   = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --inputdir=. --outputdir=$(BUILD)/isolation

PG_CPPFLAGS = -Icore
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
PG_CXXFLAGS = -std=c++20 -fPIC -Wall -Wextra -Werror -Wno-unused-parameter
SHLIB_LINK  = -lstdc++ -lcrypto

# No LLVM bitcode: the module's C++ is not worth inlining into JIT code, and
# a fresh machine need not have clang.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The install script is the SQL parts, in file-name order.
$(DATA_built): $(SQL_PARTS)
	cat $(SQL_PARTS) > $@

CMAKE_BUILD_TYPE ?= RelWithDebInfo

# SKIP_CXX=1 builds only the extension.
.PHONY: cxx test fuzz
ifndef SKIP_CXX
all: cxx
endif
cxx:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
	cmake --build $(BUILD) -j$$(nproc)

test:
	bash test/run-all.sh

FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash test/fuzz/run.sh

installcheck: | regress-dirs
.PHONY: regress-dirs
regress-dirs:
	mkdir -p $(BUILD)/regress $(BUILD)/isolation
