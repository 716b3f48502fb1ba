# Tsubu build and test entry points. `make test` is the one command CI runs.
#
#   make setup        install system packages, Blender and the bpy and build venvs (idempotent)
#   make build        the Python extension tsubu._core in place, for Python 3.11 (/usr/bin/python3: Blender
#                     3.4 to 5.0) and Python 3.13 (Blender 5.2), against NumPy 2.2's headers (loads in NumPy >= 1.21)
#   make wheels       dist/wheels/: those same builds as manylinux wheels, shared libraries bundled (auditwheel)
#   make extension    dist/tsubu-<version>.zip for Blender 4.2+ (Install from Disk): the add-on and its wheels
#   make test         everything below, after setup and build
#   make test-c       C core tests, optimised, under ASan+UBSan and (sand) Valgrind, plus a bounded fuzz run
#   make test-python  pytest in plain /usr/bin/python3 (NumPy 1.24) and Python 3.13 (NumPy 2)
#   make test-blender the add-on in Debian's Blender 3.4 and in bpy 4.2, 4.5, 5.0 and 5.2; the built
#                     extension installed into clean Blenders, one of them in a system without the core's libraries
#   make bench        benchmarks (not part of the tests)
#   make addon-zip    dist/tsubu-<version>-legacy.zip for Blender 3.4 (Edit > Preferences > Add-ons > Install)
#   make demo         bake the demo water scene in headless Blender and render out/water_demo.png

PYTHON      ?= /usr/bin/python3
BUILD311    := .venv/build-3.11/bin/python
BUILD313    := .venv/build-3.13/bin/python
BUILD       := build
CORE_SRC    := $(wildcard csrc/core/*.c)
VDB_SRC     := csrc/vdb/tsubu_vdb.cpp
TEST_SRC    := $(wildcard tests/c/test_*.c) tests/c/fixtures.c
BENCH_SRC   := tests/c/bench_core.c tests/c/fixtures.c
VENVS       := .venv/bpy-4.2 .venv/bpy-4.5

WARN        := -Wall -Wextra
CFLAGS_OPT  := -std=c11 -D_GNU_SOURCE -O3 -fno-math-errno -ffp-contract=off -fopenmp -fPIC $(WARN)
CXXFLAGS    := -std=c++17 -O3 -fPIC $(WARN)
SAN         := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS_SAN  := -std=c11 -D_GNU_SOURCE -O1 -fno-math-errno -ffp-contract=off -g -fopenmp $(SAN) $(WARN)
LIBS        := -lopenvdb -lImath-3_1 -ltbb -lz -lqhull_r -lpthread -lm -lstdc++

.PHONY: all setup build wheels extension test test-c test-c-opt test-c-san test-c-valgrind test-c-fuzz-cache test-c-fuzz-png test-python test-blender bench clean fuzz addon-zip demo
all: build

setup:
	@bash scripts/setup.sh

# ---- C core as a static library (no Python) ----
$(BUILD)/opt/%.o: csrc/core/%.c $(wildcard csrc/core/*.h) csrc/vdb/tsubu_vdb.h
	@mkdir -p $(dir $@)
	gcc $(CFLAGS_OPT) -c $< -o $@
$(BUILD)/san/%.o: csrc/core/%.c $(wildcard csrc/core/*.h) csrc/vdb/tsubu_vdb.h
	@mkdir -p $(dir $@)
	gcc $(CFLAGS_SAN) -c $< -o $@
$(BUILD)/opt/tsubu_vdb.o: $(VDB_SRC) csrc/vdb/tsubu_vdb.h csrc/core/status.h
	@mkdir -p $(dir $@)
	g++ $(CXXFLAGS) -c $< -o $@
$(BUILD)/san/tsubu_vdb.o: $(VDB_SRC) csrc/vdb/tsubu_vdb.h csrc/core/status.h
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O1 -g $(SAN) $(WARN) -c $< -o $@

CORE_OBJ_OPT := $(patsubst csrc/core/%.c,$(BUILD)/opt/%.o,$(CORE_SRC)) $(BUILD)/opt/tsubu_vdb.o
CORE_OBJ_SAN := $(patsubst csrc/core/%.c,$(BUILD)/san/%.o,$(CORE_SRC)) $(BUILD)/san/tsubu_vdb.o

$(BUILD)/opt/libtsubu_core.a: $(CORE_OBJ_OPT)
	ar rcs $@ $^
$(BUILD)/san/libtsubu_core.a: $(CORE_OBJ_SAN)
	ar rcs $@ $^

$(BUILD)/opt/test_core: $(TEST_SRC) tests/c/check.h tests/c/fixtures.h $(BUILD)/opt/libtsubu_core.a
	gcc $(CFLAGS_OPT) -Icsrc $(TEST_SRC) $(BUILD)/opt/libtsubu_core.a $(LIBS) -o $@
$(BUILD)/san/test_core: $(TEST_SRC) tests/c/check.h tests/c/fixtures.h $(BUILD)/san/libtsubu_core.a
	gcc $(CFLAGS_SAN) -Icsrc $(TEST_SRC) $(BUILD)/san/libtsubu_core.a $(LIBS) -o $@
$(BUILD)/opt/bench_core: $(BENCH_SRC) tests/c/fixtures.h $(BUILD)/opt/libtsubu_core.a
	gcc $(CFLAGS_OPT) -Icsrc $(BENCH_SRC) $(BUILD)/opt/libtsubu_core.a $(LIBS) -o $@
$(BUILD)/fuzz/fuzz_cache: tests/c/fuzz_cache.c csrc/core/cache.c csrc/core/checkpoint.c csrc/core/status.c
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Icsrc $^ -lz -lpthread -lm -o $@
$(BUILD)/fuzz/fuzz_png: tests/c/fuzz_png.c csrc/core/png.c csrc/core/status.c
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Icsrc $^ -lz -lm -o $@

# ---- tests ----
# Five runs that make -j 2 (as `make test` calls it) runs two at a time, each run's output kept together (-O).
# A fuzzer's log is cut to its last lines, keeping its exit status (a crash it finds fails the run).
test-c: test-c-opt test-c-san test-c-valgrind test-c-fuzz-cache test-c-fuzz-png
test-c-opt: $(BUILD)/opt/test_core
	OMP_NUM_THREADS=2 $(BUILD)/opt/test_core
test-c-san: $(BUILD)/san/test_core
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=2 $(BUILD)/san/test_core --skip-long
# reads of uninitialised memory, which ASan does not see (seconds for sand; the others take minutes)
test-c-valgrind: $(BUILD)/opt/test_core
	OMP_NUM_THREADS=1 valgrind -q --error-exitcode=3 $(BUILD)/opt/test_core --skip-long sand/
test-c-fuzz-cache: $(BUILD)/fuzz/fuzz_cache
	@mkdir -p $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/fuzz_cache -max_total_time=30 -max_len=4096 -seed=1 $(BUILD)/fuzz/corpus tests/c/fuzz_seeds \
	    >$(BUILD)/fuzz/cache.log 2>&1; status=$$?; tail -2 $(BUILD)/fuzz/cache.log; exit $$status
test-c-fuzz-png: $(BUILD)/fuzz/fuzz_png
	@mkdir -p $(BUILD)/fuzz/corpus_png
	$(BUILD)/fuzz/fuzz_png -max_total_time=15 -max_len=4096 -seed=1 $(BUILD)/fuzz/corpus_png tests/c/fuzz_seeds_png \
	    >$(BUILD)/fuzz/png.log 2>&1; status=$$?; tail -2 $(BUILD)/fuzz/png.log; exit $$status

fuzz: $(BUILD)/fuzz/fuzz_cache $(BUILD)/fuzz/fuzz_png build
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/corpus_png
	$(BUILD)/fuzz/fuzz_cache -max_total_time=600 $(BUILD)/fuzz/corpus tests/c/fuzz_seeds
	$(BUILD)/fuzz/fuzz_png -max_total_time=300 $(BUILD)/fuzz/corpus_png tests/c/fuzz_seeds_png
	cd tests/python && TSUBU_FUZZ_SECONDS=300 $(PYTHON) -m pytest -q -p no:cacheprovider test_loader_fuzz.py

build: .venv/build-3.11/.stamp .venv/build-3.13/.stamp
	# both at once: each spends most of its time on OpenVDB's one C++ file
	$(BUILD311) setup.py -q build_ext --inplace & first=$$!; \
	$(BUILD313) setup.py -q build_ext --inplace; second=$$?; wait $$first && exit $$second

.venv/%/.stamp: scripts/requirements-%.txt
	bash scripts/setup.sh

test-python: build
	cd tests/python && $(PYTHON) -m pytest -q -p no:cacheprovider -n 2 --durations=15 .
	# again on Python 3.13 with NumPy 2 (the interpreter of the bpy 5.2 venv; the tests never import bpy),
	# without the long physical runs, which check the solvers rather than the interpreter
	cd tests/python && ../../.venv/bpy-5.2/bin/python -m pytest -q -p no:cacheprovider -n 2 -m "not physics_long" .

test-blender: build extension
	bash tests/blender/run.sh
	bash tests/blender/extension.sh

wheels: build
	$(PYTHON) scripts/build_wheels.py

extension: wheels .venv/bpy-5.0/.stamp
	$(PYTHON) scripts/make_extension.py

test: setup
	$(MAKE) -j 2 -O --no-print-directory test-c   # -j: the builds side by side, then the five runs two at a time
	$(MAKE) test-python
	$(MAKE) test-blender

bench: build $(BUILD)/opt/bench_core
	OMP_NUM_THREADS=1 $(BUILD)/opt/bench_core
	OMP_NUM_THREADS=2 $(BUILD)/opt/bench_core
	PYTHONPATH=addon $(PYTHON) -m tsubu bench core
	PYTHONPATH=addon $(PYTHON) -m tsubu bench water
	PYTHONPATH=addon $(PYTHON) -m tsubu bench sand
	PYTHONPATH=addon $(PYTHON) -m tsubu bench fracture
	PYTHONPATH=addon $(PYTHON) -m tsubu bench surface
	PYTHONPATH=addon $(PYTHON) -m tsubu bench erosion
	PYTHONPATH=addon $(PYTHON) -m tsubu bench elastoplastic

demo: setup
	$(MAKE) build
	blender -b --factory-startup --python-exit-code 1 --python scripts/demo.py -- --out out

addon-zip: build
	$(PYTHON) scripts/make_addon_zip.py

clean:
	rm -rf $(BUILD) dist addon/tsubu/_core*.so
