# Sourced by ci/test.sh: route the workspace's own crates through clippy-driver,
# denying warnings, as `cargo clippy -- -D warnings` does. Dependencies are compiled by rustc
# as usual (RUSTC_WORKSPACE_WRAPPER applies to workspace members only).
clippy_driver="$(command -v clippy-driver || true)"
if [ -z "$clippy_driver" ] && command -v rustup >/dev/null 2>&1; then
  clippy_driver="$(rustup which clippy-driver 2>/dev/null || true)"
fi
if [ -z "$clippy_driver" ]; then
  echo "clippy-driver not found: install it with 'rustup component add clippy'" >&2
  exit 1
fi
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
# cargo-clippy's own encoding of `-- -D warnings`: arguments joined by this separator.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
