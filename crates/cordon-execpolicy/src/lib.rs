//! Exec policy (stub, see issue 4).
