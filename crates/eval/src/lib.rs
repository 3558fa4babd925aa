//! `bauxite eval bridge`: seed 004's evaluation of the adaptive bridge.
//!
//! A publisher, the bridge, a critical subscriber on a clean path and a slow subscriber
//! behind bursty (Gilbert–Elliott) loss, each in its own network namespace; baseline,
//! bridge, ablation and toggle runs; real DDS peers (`peers/`: Cyclone DDS, ROS 2 on
//! Fast DDS, RustDDS). This crate sits beside `demo`: it depends on `netlab`, `bridge`
//! and `telemetry`, and only `cli` depends on it.
