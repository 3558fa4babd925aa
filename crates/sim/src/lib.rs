//! A deterministic discrete-event network simulator (seed 003's ns-3 study).
#![deny(missing_docs)]
