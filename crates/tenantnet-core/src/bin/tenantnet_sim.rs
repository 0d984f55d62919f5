//! `tenantnet-sim SCENARIO [--cut THREADS]`: runs a scenario without Python and prints
//! its summary, or with `--cut` the profile of the run cut for that many threads
//! (`tenantnet_core::sim::cut_profile`). For profiling (perf, callgrind) and for
//! scripting without the Python package.

use std::path::Path;
use std::process::ExitCode;

use tenantnet_core::sim::Sim;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[2] == "--cut" {
        return profile(&args[1], &args[3]);
    }
    if args.len() != 2 {
        eprintln!("usage: tenantnet-sim SCENARIO.toml [--cut THREADS]");
        return ExitCode::from(2);
    }
    let Some(mut sim) = load(&args[1]) else {
        return ExitCode::from(2);
    };
    sim.run();
    let r = sim.results();
    println!(
        "{}",
        serde_json::to_string_pretty(&r.summary).expect("summary serializes")
    );
    ExitCode::SUCCESS
}

/// The scenario at `path`, or `None` having said why not.
fn load(path: &str) -> Option<Sim> {
    match tenantnet_core::scenario::load_file(Path::new(path)) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

/// `--cut THREADS`: the run profiled as cut for that many threads. Apart from the
/// plain run, so that `main`'s loop compiles as it does without it (measured: with
/// both in `main` the event queue's `advance` was no longer inlined there, 0.9 % more
/// instructions on the permutation).
#[inline(never)]
fn profile(path: &str, threads: &str) -> ExitCode {
    let Some(threads) = threads.parse().ok().filter(|n| (1..=4096).contains(n)) else {
        eprintln!("error: --cut {threads}: expected a number of threads, 1 to 4096");
        return ExitCode::from(2);
    };
    let Some(mut sim) = load(path) else {
        return ExitCode::from(2);
    };
    let profile = sim.run_profiling_cut(threads);
    println!(
        "{}",
        serde_json::to_string_pretty(&profile).expect("a profile serializes")
    );
    ExitCode::SUCCESS
}
