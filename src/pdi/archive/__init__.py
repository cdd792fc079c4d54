"""The archive: the one domain service (mint, deposit, version, resolve, list, assert, verify)."""
