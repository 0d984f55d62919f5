"""One scenario and its simulation: loading and checking scenarios, schemes as
presets, stepping the Rust core, results, estimates of a run's time, and QShare's
controller."""
