//! `tenantnet-sim SCENARIO`: runs a scenario without Python and prints its summary.
//! For profiling (perf, callgrind) and for scripting without the Python package.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: tenantnet-sim SCENARIO.toml");
        return ExitCode::from(2);
    }
    let mut sim = match tenantnet_core::scenario::load_file(Path::new(&args[1])) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    sim.run();
    let r = sim.results();
    println!(
        "{}",
        serde_json::to_string_pretty(&r.summary).expect("summary serializes")
    );
    ExitCode::SUCCESS
}
