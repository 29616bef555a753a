# Entry points for people and CI. Each target sets up what it needs, starting from the
# Debian packages, so `make test` and `make demo` work on a fresh Debian 12 machine.

DEV_DIR     := build/dev
RELEASE_DIR := build/release
ASAN_DIR    := build/asan-ubsan
CTEST_FLAGS := --output-on-failure -j2
PREFIX       ?= /usr/local
DESTDIR      ?=
APPARMOR_DIR ?= /etc/apparmor.d
FUZZ_SECONDS ?= 60

.DEFAULT_GOAL := build
.PHONY: deps configure build test demo release release-berth install package test-package \
	bench asan asan-configure tidy check-format check fuzz lint format clean

deps:
	scripts/install-deps

# Configure once; afterwards ninja re-runs cmake by itself when a CMakeLists.txt changes.
configure: deps
	@test -f $(DEV_DIR)/build.ninja || cmake --preset dev

build: configure
	cmake --build $(DEV_DIR)

test: build
	ctest --test-dir $(DEV_DIR) $(CTEST_FLAGS)

# The demo needs only the berth binary, not the ~480 targets of the tests.
demo: configure
	cmake --build $(DEV_DIR) --target berth
	@test -x scripts/demo || { echo "make: scripts/demo is missing or not executable" >&2; exit 1; }
	BERTH=$(DEV_DIR)/src/cli/berth scripts/demo

release: deps
	cmake --preset release
	cmake --build $(RELEASE_DIR)

# Only the berth binary of the release tree: what install and package ship.
release-berth: deps
	@test -f $(RELEASE_DIR)/build.ninja || cmake --preset release
	cmake --build $(RELEASE_DIR) --target berth

# The stripped binary, man page, completions and AppArmor profile (docs/install.md).
# APPARMOR_DIR= leaves the profile out, e.g. for PREFIX=$$HOME/.local.
install: release-berth
	scripts/install --binary $(RELEASE_DIR)/src/cli/berth --prefix $(PREFIX) \
		--destdir "$(DESTDIR)" --apparmor-dir "$(APPARMOR_DIR)"

# The Debian package of the same files, in build/ (docs/install.md).
package: release-berth
	scripts/package --binary $(RELEASE_DIR)/src/cli/berth --out build

# Installs that package into a fresh Debian 12 root (debootstrap) and runs a job there.
test-package: release-berth
	scripts/test-package "$$(scripts/package --binary $(RELEASE_DIR)/src/cli/berth --out build | tail -n 1)"

bench: release
	@test -x bench/sandbox-start || { echo "make: bench/sandbox-start is missing or not executable" >&2; exit 1; }
	BERTH=$(RELEASE_DIR)/src/cli/berth bench/sandbox-start

# Only src/sys includes system headers, and modules depend on each other as docs/design.md
# draws it. Needs python3 only, no build.
lint:
	scripts/check-includes

# The clang tree: ASan + UBSan, and -Wthread-safety checking the lock annotations.
asan-configure: deps
	@test -f $(ASAN_DIR)/build.ninja || cmake --preset asan-ubsan

asan: asan-configure
	cmake --build $(ASAN_DIR)
	scripts/asan-tests $(ASAN_DIR) unit
	scripts/asan-tests $(ASAN_DIR) e2e

# clang-tidy over src/ with the clang tree's compile database (no build needed).
tidy: asan-configure
	scripts/run-tidy $(ASAN_DIR)

check-format:
	scripts/check-format

# The gates CI runs besides the tests: format, the clang tree's build and tests, clang-tidy.
check: check-format lint asan tidy

# Every libFuzzer target, built with clang in build/fuzz, FUZZ_SECONDS each (scripts/fuzz).
fuzz: deps
	scripts/fuzz --seconds $(FUZZ_SECONDS)

format:
	find src tests \( -name '*.cc' -o -name '*.h' \) -print0 | xargs -0 -r clang-format -i

clean:
	rm -rf build
