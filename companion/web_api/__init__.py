"""The scorepad's web adapter: helpers for `companion.server` (no rule is decided here)."""
