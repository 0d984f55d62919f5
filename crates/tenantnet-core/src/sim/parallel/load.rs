//! How many of the machine's cores are idle right now: what the default thread rule
//! looks at before it gives a run more than one thread.

use std::time::Duration;

/// How long the idle cores are measured over.
pub(super) const SPAN: Duration = Duration::from_millis(30);

/// The cores idle over [`SPAN`] (from `/proc/stat`: the idle and I/O-wait time of
/// every core, over the time that passed), or none where the kernel does not say.
pub(super) fn idle_cores() -> Option<f64> {
    let a = read()?;
    std::thread::sleep(SPAN);
    let b = read()?;
    idle_between(a, b)
}

/// (Idle time, all time, cores) from `/proc/stat`.
fn read() -> Option<(u64, u64, usize)> {
    parse(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// (Idle time, all time, cores) from the text of `/proc/stat`: its first line sums
/// every core's times in clock ticks (user, nice, system, idle, iowait, irq,
/// softirq, steal, ...), then a line per core.
fn parse(text: &str) -> Option<(u64, u64, usize)> {
    let mut lines = text.lines();
    let all: Vec<u64> = lines
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let cores = lines
        .take_while(|l| l.starts_with("cpu"))
        .filter(|l| l[3..].starts_with(|c: char| c.is_ascii_digit()))
        .count();
    let idle = all.get(3)? + all.get(4).copied().unwrap_or(0);
    // guest time is counted in user time already
    let total = all.iter().take(8).sum();
    Some((idle, total, cores))
}

/// The cores idle between two readings.
fn idle_between(a: (u64, u64, usize), b: (u64, u64, usize)) -> Option<f64> {
    let total = b.1.checked_sub(a.1).filter(|&t| t > 0)?;
    let idle = b.0.saturating_sub(a.0).min(total);
    Some(b.2 as f64 * idle as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1\n";
    const B: &str = "cpu  200 0 50 900 50 0 0 0 0 0\ncpu0 150 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 500 25 0 0 0 0 0\nintr 1\n";

    #[test]
    fn a_core_kept_busy_leaves_one_of_two_idle() {
        let (a, b) = (parse(A).unwrap(), parse(B).unwrap());
        assert_eq!(a, (850, 1000, 2));
        assert_eq!(idle_between(a, b), Some(1.0));
        assert_eq!(idle_between(a, a), None);
        assert!(parse("intr 1\n").is_none());
    }

    #[test]
    fn this_machine_says() {
        if std::path::Path::new("/proc/stat").exists() {
            let idle = idle_cores().unwrap();
            let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
            assert!((0.0..=cores as f64 + 0.5).contains(&idle), "{idle}");
        }
    }
}
