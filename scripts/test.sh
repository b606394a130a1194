#!/usr/bin/env bash
# Installs flashlab with its test dependencies and runs every test: Rust (unit, integration,
# doc tests) and Python. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# The test extra brings the analysis extra (pandas, pyarrow, tqdm) and Dask (sweeps on a local
# cluster).
# The browser test of `flashlab reproduce`'s report (tests/test_reproduce.py) needs Debian's
# chromium and chromium-driver: installed here when missing and apt-get is usable (root or
# sudo); otherwise that one test is skipped with a message (a failure when
# FLASHLAB_REQUIRE_BROWSER=1, as in CI).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if command -v apt-get >/dev/null; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
        echo "== installing chromium and chromium-driver (browser test)"
        { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium chromium-driver; } ||
            echo "warning: could not install chromium; the browser test will be skipped" >&2
    fi
fi

# The block-device tests (`flashlab serve`, crates/cli/tests/serve_clients.rs and
# nbd_clients.rs) drive Debian's clients: fio, qemu-img/qemu-io, nbdinfo/nbdcopy/nbdfuse,
# nbdkit, fuse2fs, e2fsprogs, fusermount. Installed here when missing and apt-get is usable;
# otherwise those tests fail naming the package (FLASHLAB_SKIP_CLIENT_TESTS=1 skips them).
clients="fio qemu-img qemu-io nbdinfo nbdcopy nbdfuse nbdkit fuse2fs mkfs.ext4 e2fsck fusermount"
missing=$(for c in $clients; do command -v "$c" >/dev/null || echo "$c"; done)
if [ -n "$missing" ] && command -v apt-get >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
    echo "== installing the block-device test clients (missing: $(echo $missing))"
    { $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
            fio qemu-utils libnbd-bin nbdkit fuse2fs e2fsprogs fuse3 >/dev/null; } ||
        echo "warning: could not install the NBD test clients; their tests will fail" >&2
fi

echo "== installing flashlab (Python package, builds the Rust core)"
python3 -m pip install --quiet --disable-pip-version-check ".[test]"

echo "== Rust tests"
cargo test --locked

echo "== Python tests"
python3 -m pytest -q tests

# A failing property test writes its seed next to the test (NAME.proptest-regressions): such a
# file is committed with the fix (ARCHITECTURE.md, Testing), never left lying around.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    stray=$(git ls-files --others --exclude-standard -- '*.proptest-regressions')
    if [ -n "$stray" ]; then
        echo "error: property tests left new failure seeds; commit them with the fix:" >&2
        echo "$stray" >&2
        exit 1
    fi
fi
