//! Snapshot-tested query suites (being written).
