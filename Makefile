# The two commands of the README:
#   make demo   installs what is missing (Debian 12 packages), builds the CLI alone, analyzes a bundled model
#   make test   the same setup, builds everything (tests, Python module, benchmarks), then the whole test suite
#   make        builds everything
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps test-deps build cli demo test bench clean test-sanitize fuzz ground-truth ort-node python

all: build

# Installs the Debian packages of a list that are missing (apt-get, as root or with sudo).
define install_missing
	@missing=""; for p in $$(grep -v '^#' $(1)); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

# Build dependencies; the tests also want Debian's ONNX test models and Chromium
# (third_party/debian-packages-test.txt), the benchmarks jq, bc and python3-onnx.
deps:
	$(call install_missing,third_party/debian-packages.txt)

test-deps:
	$(call install_missing,third_party/debian-packages-test.txt)

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The Python module alone (python/README.md), into $(BUILD_DIR)/python:
#   PYTHONPATH=build/python python3 -c "import onnx_footprint as fp; print(fp.analyze('testdata/mnist.onnx'))"
python: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target onnx_footprint

# Only the target the demo runs: a first contact in minutes, not the whole suite's build.
cli: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target onnx-footprint

demo: cli
	./$(BUILD_DIR)/onnx-footprint analyze testdata/mnist.onnx

test: build test-deps ort-node
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# onnxruntime-node for ctest's ground_truth_onnxruntime and `make ground-truth`
# (bench/ground_truth/install_ort.sh): installed once into
# $(BUILD_DIR)/ground-truth; without the npm registry it says so and the
# test skips. npm: the machine's own when it has one (a NodeSource nodejs
# bundles npm and conflicts with Debian's npm package), else Debian's.
ort-node: test-deps
	@command -v npm > /dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  $(SUDO) apt-get install -y -qq --no-install-recommends nodejs npm) || \
	  echo "ort-node: Debian's nodejs and npm could not be installed; ground_truth_onnxruntime will skip"
	@bash bench/ground_truth/install_ort.sh $(BUILD_DIR)/ground-truth || [ $$? -eq 77 ]

bench: build
	$(call install_missing,third_party/debian-packages-bench.txt)
	bash bench/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)

# The ground truth against ONNX Runtime (bench/ground_truth/README.md): installs
# onnxruntime-node from the npm registry into $(BUILD_DIR)/ground-truth (its
# install script is skipped: it fetches GPU binaries), then measures every shared
# model and a few hundred of Debian's test models, one at a time, one thread.
ground-truth: build ort-node
	$(call install_missing,third_party/debian-packages-bench.txt)
	bash bench/ground_truth/install_ort.sh $(BUILD_DIR)/ground-truth
	bash bench/ground_truth/run.sh $(BUILD_DIR)

# Sanitizers: the whole suite and the model sweep under AddressSanitizer + UBSan.
SANITIZE_DIR ?= build-sanitize
test-sanitize: deps test-deps
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFOOTPRINT_SANITIZE=ON \
	  -DFOOTPRINT_ORT_NODE_DIR=$(abspath $(BUILD_DIR))/ground-truth
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS)

# Fuzzing (clang's libFuzzer with ASan + UBSan): FUZZ_SECONDS per run, corpus in $(FUZZ_DIR)/corpus.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 600
fuzz: deps
	@dpkg-query -W -f='$${Status}' clang libclang-rt-14-dev 2>/dev/null | grep -q "ok installed" || \
	  ($(SUDO) apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev)
	CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFOOTPRINT_SANITIZE=ON -DFOOTPRINT_FUZZ=ON
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target analyze_fuzzer
	bash tools/fuzz_seed_corpus.sh $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/analyzer/fuzz/analyze_fuzzer $(FUZZ_DIR)/corpus -max_total_time=$(FUZZ_SECONDS) -max_len=200000 \
	  -timeout=10 -rss_limit_mb=4096 -artifact_prefix=$(FUZZ_DIR)/ -print_final_stats=1
