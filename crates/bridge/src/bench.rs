//! The benchmark (to come).
