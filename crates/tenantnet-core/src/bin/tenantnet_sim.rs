//! `tenantnet-sim SCENARIO [--cut THREADS | --threads THREADS]`: runs a scenario
//! without Python and prints its summary (on up to THREADS threads with `--threads`,
//! else on as many as it gains from),
//! or with `--cut` the profile of the run cut for that many threads
//! (`tenantnet_core::sim::cut_profile`). For profiling (perf, callgrind) and for
//! scripting without the Python package.

use std::path::Path;
use std::process::ExitCode;

use tenantnet_core::sim::cut_profile::CutProfile;
use tenantnet_core::sim::Sim;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[2] == "--cut" {
        return profile(&args[1], &args[3]);
    }
    let threads = match &args[..] {
        [_, _] => Some(0),
        [_, _, flag, n] if flag == "--threads" => threads_arg("--threads", n),
        _ => None,
    };
    let Some(threads) = threads else {
        eprintln!("usage: tenantnet-sim SCENARIO.toml [--cut THREADS | --threads THREADS]");
        return ExitCode::from(2);
    };
    let Some(mut sim) = load(&args[1]) else {
        return ExitCode::from(2);
    };
    sim.set_threads(threads, false);
    sim.run();
    if let Some(note) = sim.parallel.threads_note() {
        eprintln!("note: {note}");
    }
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
    let Some(threads) = threads_arg("--cut", threads) else {
        return ExitCode::from(2);
    };
    let Some(mut sim) = load(path) else {
        return ExitCode::from(2);
    };
    let profile = CutProfile::measure(&mut sim, threads);
    println!(
        "{}",
        serde_json::to_string_pretty(&profile).expect("a profile serializes")
    );
    ExitCode::SUCCESS
}

/// A number of threads given to `flag`, 1 to 4096, or `None` having said why not.
fn threads_arg(flag: &str, text: &str) -> Option<usize> {
    let n = text.parse().ok().filter(|n| (1..=4096).contains(n));
    if n.is_none() {
        eprintln!("error: {flag} {text}: expected a number of threads, 1 to 4096");
    }
    n
}
