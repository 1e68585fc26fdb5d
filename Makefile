# The two commands of the README: `make demo` and `make test`. Both install
# missing Debian packages first, then build Release into build/.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
# A compiler cache (ccache, installed by scripts/install-deps.sh) makes a fresh
# clone's build reuse the objects of earlier builds of the same sources: paths
# under the clone are hashed relative to it, so a clone elsewhere hits too.
# CCACHE=off builds without it (a cold build, as on a new machine). Both are
# expanded when the configure step runs, after `deps`: on a bare machine the
# first build then fills the cache that `install-deps.sh` has just installed.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
CACHE_LAUNCHER = $(filter-out off,$(CCACHE))
# ccache's settings travel in the launcher (`env VAR=... ccache`), not in this
# Makefile's environment: a build run as `ninja -C build` or `cmake --build`
# then hashes the same relative paths as `make build`. Without them every
# clone's absolute paths made its own cache entries, and a fresh clone never hit.
CACHE_ENV = CCACHE_BASEDIR=$(CURDIR);CCACHE_NOHASHDIR=true;CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime,time_macros,pch_defines
CACHE_COMMAND = /usr/bin/env;$(CACHE_ENV);$(CACHE_LAUNCHER)
CACHE_ARGS = $(if $(CACHE_LAUNCHER),"-DCMAKE_CXX_COMPILER_LAUNCHER=$(CACHE_COMMAND)" "-DCMAKE_C_COMPILER_LAUNCHER=$(CACHE_COMMAND)")
DEMO_TRACE ?= data/mlp.et.json.gz

.PHONY: deps configure build demo test bench fuzz asan clean

deps:
	bash scripts/install-deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CACHE_ARGS) $(CMAKE_ARGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD_DIR)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 900

bench: build
	bash scripts/run-benchmarks.sh $(BUILD_DIR)

fuzz: deps
	bash scripts/fuzz.sh

asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACETWIN_SANITIZE=ON -DTRACETWIN_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) -L core

clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz
