//! A parallel run: the network cut into partitions (`net::partition`: by pod, or by
//! leaf), each a copy of the simulation that handles only the events of its own
//! nodes, synchronised conservatively (Chandy and Misra), on the run's threads.
//!
//! - **Windows.** Every thread processes the events whose keys are below the
//!   window's bound; the thread that finishes a window's last partition opens the
//!   next (`pool`: which thread runs which partition changes nothing, so threads
//!   that lose their cores to other work leave theirs to the others). A window
//!   ends at the next multiple of the grid (the smallest link delay, no longer
//!   than the cut's lookahead), at the next global event, or at the run's end,
//!   whichever comes first; it starts at the earliest pending event, so idle
//!   stretches cost one window. Mail sent in a window is read in the next one (two
//!   sets of mailboxes, by the window's parity).
//! - **Mail.** A packet that leaves by a cut port is taken out of its partition's
//!   pool and mailed, with its SACK option, to the partition of the far node, which
//!   schedules its arrival with the key the sequential run gives it. It arrives a
//!   link's delay later, so never within the window it was sent in.
//! - **Keys.** Under partitioned ties an event's key (time, the rank of the port
//!   that scheduled it, its kind) is the same in whichever queue it sits; so each
//!   partition processes its events in the sequential run's order, and the results
//!   are the same bytes for any number of threads.
//! - **Hosts.** Each partition holds every host's vswitch as its start left it (so
//!   shapers have the run's ids) and runs its own hosts': their policies, shapers,
//!   ticks and, with the CPU model, PMD cores, C2TB refills and NIC monitor. A
//!   policy's feedback travels as packets; a host tick reads one host. A packet a
//!   small queue counts that leaves by a cut NIC stays at its sender as a ghost
//!   until its `Sent` event. Request–response gates count deliveries and start
//!   flows at one host (`merge::plan` checks), so in one partition.
//! - **Global events.** Samples and controllers' wakes are the run's own (the
//!   coordinator's queue): the window ends at the event's key, the coordinator
//!   copies each port from the partition that owns it, each VM from its host's and
//!   each flow's sender and receiver halves from theirs (`merge`), and handles it;
//!   a controller's actions are then applied to every partition (a VM's host hooks
//!   only in its host's). Flow starts are each partition's own: each starts the
//!   flows whose source it owns, at the sequential run's keys. Per-host records
//!   (`vm_rates`, the CPU model's) come back in the sequential run's order (`rows`).
//! - **Stops.** A run that stops when every flow is done stops on the grid
//!   (`RunBudget::stop_all_done`), which every partition can see at a window's end.
//!
//! What cannot be cut runs sequentially, with a note saying why
//! ([`Threads::note`]): scheduled ties, a network of one piece, a cut link without
//! delay, a gate whose flows span partitions, copies of the state past the memory
//! budget.

mod clock;
mod fork;
mod load;
mod merge;
mod owners;
mod part;
mod pool;
pub(super) mod rows;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::{Event, Sim};
use crate::engine::queue::Origin;
use crate::engine::Time;
use crate::net::Network;
use clock::WindowClock;
use owners::Owners;
pub(super) use part::Mail;
pub(super) use part::PartCtx;
use pool::{Awake, Claims, Pace};

/// The threads a run was asked to use, and why it uses one if it does.
#[derive(Clone, Debug, Default)]
pub struct Threads {
    /// Threads asked for (0: chosen for the run; 1: sequential).
    pub asked: usize,
    /// Whether the run takes as many threads as asked whatever the machine's load
    /// (otherwise, as many as it has idle cores, up to those asked).
    pub exact: bool,
    /// The cores a run chosen for (`asked` 0) may take: the machine's when 0, else
    /// its share of them (a worker among others running simulations at once).
    pub cores: usize,
    /// Why the run is sequential although more were asked for: one line.
    pub note: Option<String>,
}

/// The smallest delay of any link of `net` (0 when none has one): the grid windows
/// and stops fall on.
pub fn grid(net: &Network) -> Time {
    (net.ports.iter().map(|p| p.delay()).filter(|&d| d > 0))
        .min()
        .unwrap_or(0)
}

/// The first multiple of `grid` after `t` (saturating).
pub fn grid_after(t: Time, grid: Time) -> Time {
    (t / grid).saturating_add(1).saturating_mul(grid)
}

/// The state of a parallel run between calls.
pub(super) struct ParState {
    parts: Vec<Mutex<Sim>>,
    /// Mail from partition `s` to `t` sent in a window of parity `w`:
    /// `mail[(w * n + s) * n + t]` (a window reads its predecessor's).
    mail: Vec<Mutex<Vec<Mail>>>,
    /// Which partition owns each piece of the run's state.
    owners: Owners,
    consts: ParConsts,
    lp: LoopState,
    pace: Pace,
}

impl ParState {
    /// The partitions.
    pub(super) fn len(&self) -> usize {
        self.parts.len()
    }

    /// Events processed by the partitions, less the copies of those the sequential
    /// run handles as one event for every partition (flows of several partitions
    /// starting at one instant, the host ticks).
    pub(super) fn events(&self) -> u64 {
        let parts: Vec<_> = self.parts.iter().map(lock).collect();
        let ctx = parts.iter().filter_map(|p| p.parallel.part.as_deref());
        let mut shared: Vec<(Time, u32)> = ctx.flat_map(|c| c.shared.iter().copied()).collect();
        let all = shared.len();
        shared.sort_unstable();
        shared.dedup();
        let own: u64 = parts.iter().map(|p| p.events.processed()).sum();
        own - (all - shared.len()) as u64
    }
}

fn lock(m: &Mutex<Sim>) -> MutexGuard<'_, Sim> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where the windows stand: the thread that closes a window updates it from the
/// partitions' reports and opens the next.
#[derive(Clone, Debug)]
struct LoopState {
    /// The next window's index.
    k: usize,
    /// The bound of the last window.
    prev: u128,
    /// The earliest pending event or mail of any partition.
    t_min: Time,
    /// The key of the coordinator's next global event.
    global: u128,
    /// The run's end (brought forward when every flow is done).
    run_end: Time,
    /// This call's end.
    target: Time,
    /// Every flow is done.
    stopped: bool,
    /// A partition failed (outgrew its memory).
    failed: bool,
    /// The latest event time any partition processed.
    now: Time,
}

/// What a partition reports at a window's end.
#[derive(Clone, Copy, Debug, Default)]
struct Report {
    head: Time,
    mail_min: Time,
    completed: u64,
    last_complete: Time,
    failed: bool,
    now: Time,
}

impl LoopState {
    /// The next window's bound, or none when this call is done.
    fn bound(&self, grid: Time) -> Option<u128> {
        let end_key = ((self.target.min(self.run_end) as u128) + 1) << 64;
        if self.failed || self.prev >= end_key {
            return None;
        }
        let ws = ((self.prev >> 64) as Time).max(self.t_min);
        let we = (grid_after(ws, grid) as u128) << 64;
        Some(we.min(self.global).min(end_key))
    }

    /// Takes in every partition's report on the window that ended at `b`.
    fn absorb(&mut self, reports: &[Mutex<Report>], b: u128, ps: &ParConsts) {
        self.prev = b;
        self.k += 1;
        let (mut t_min, mut completed, mut last) = (Time::MAX, 0, 0);
        self.failed = false;
        for r in reports {
            let r = *r.lock().unwrap();
            t_min = t_min.min(r.head.min(r.mail_min));
            self.failed |= r.failed;
            self.now = self.now.max(r.now);
            completed += r.completed;
            last = last.max(r.last_complete);
        }
        self.t_min = t_min;
        if ps.stop_when_done && !self.stopped && ps.finite > 0 && completed == ps.finite {
            self.stopped = true;
            self.run_end = self.run_end.min(grid_after(last, ps.grid));
        }
    }
}

/// What every thread reads and nobody changes during a call.
struct ParConsts {
    grid: Time,
    finite: u64,
    stop_when_done: bool,
}

/// What the threads share during a call.
struct Shared<'a> {
    parts: &'a [Mutex<Sim>],
    mail: &'a [Mutex<Vec<Mail>>],
    owners: &'a Owners,
    reports: Vec<Mutex<Report>>,
    consts: &'a ParConsts,
    clock: WindowClock,
    claims: Claims,
    /// Partitions done in the open window.
    done: AtomicUsize,
    awake: Awake,
    /// What the thread that closes a window updates: the windows, the pace and when
    /// the open window was opened.
    closing: Mutex<Closing>,
    /// The run the partitions are of, for its global events.
    run: Mutex<&'a mut Sim>,
}

/// What the thread that closes a window updates.
struct Closing {
    lp: LoopState,
    pace: Pace,
    opened: Instant,
}

/// Cuts `m` for the threads it was allowed, if it can be cut; otherwise leaves it
/// sequential with a note saying why. Only before its first event.
pub(super) fn start(m: &mut Sim) {
    let n = match m.parallel.threads.asked {
        0 => match auto(m) {
            Ok(n) => n,
            Err(why) => {
                m.parallel.threads.note = Some(why);
                return;
            }
        },
        n => n,
    };
    let planned = merge::plan(m, n).and_then(|cut| {
        if m.parallel.threads.exact {
            return Ok(cut);
        }
        // up to as many threads as the machine has idle cores now
        let Some(idle) = load::idle_cores() else {
            return Ok(cut);
        };
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let usable = ((idle + 0.25).floor() as usize).min(n);
        if usable < 2 {
            return Err(format!(
                "runs on one thread: the machine's other work kept its cores busy when it started ({idle:.1} of {cores} idle)"
            ));
        }
        if usable < cut.parts {
            return merge::plan(m, usable);
        }
        Ok(cut)
    });
    match planned {
        Err(why) => m.parallel.threads.note = Some(why),
        Ok(cut) => {
            m.fabric.hand_over_by_events();
            let grid = m.budget.grid;
            let pending = take_events(m);
            let owners = Owners::new(&cut, &m.fabric.net, &m.hosts);
            let parts: Vec<Sim> = (0..cut.parts)
                .map(|i| merge::fork(m, &owners, i, &pending))
                .collect();
            // the run keeps the events it runs itself: samples and controllers' wakes
            for &(at, code) in &pending {
                if matches!(Event::decode(code), Some(Event::Sample | Event::Control(_))) {
                    m.events.push(at, Origin::GLOBAL, code);
                }
            }
            m.parallel.coordinator = true;
            let t_min = (parts.iter().filter_map(|p| p.events.peek_time()))
                .min()
                .unwrap_or(Time::MAX);
            let n = parts.len();
            m.parallel.par = Some(Box::new(ParState {
                mail: (0..2 * n * n).map(|_| Mutex::new(Vec::new())).collect(),
                parts: parts.into_iter().map(Mutex::new).collect(),
                pace: Pace::new(n),
                lp: LoopState {
                    k: 0,
                    prev: 0,
                    t_min,
                    global: m.events.peek_key().unwrap_or(u128::MAX),
                    run_end: m.budget.end,
                    target: 0,
                    stopped: false,
                    failed: false,
                    now: 0,
                },
                consts: ParConsts {
                    grid,
                    finite: m.ends.finite_flows,
                    stop_when_done: m.budget.stop_when_done,
                },
                owners,
            }));
        }
    }
}

/// `m`'s pending events (all of the whole run's: `merge::plan`), its queue left
/// empty.
fn take_events(m: &mut Sim) -> Vec<(Time, u32)> {
    let fresh = m.events.empty_like();
    let mut old = std::mem::replace(&mut m.events, fresh);
    std::iter::from_fn(|| old.pop_until(Time::MAX)).collect()
}

/// Runs with fewer events than this in a window of the grid, as the run's footprint
/// estimates them (an upper estimate: 2.7 times the events the permutation
/// processes), run on one thread when the threads are left to the run. Measured on
/// 2 cores (the Performance guide's table): estimates of 49 events per window ran
/// 0.93 times as fast on two threads, 165 ran 1.39 times, 408 ran 1.50 times.
pub const MIN_EVENTS_PER_WINDOW: f64 = 100.0;

/// The threads a run left to choose uses: the machine's cores when its windows hold
/// enough events ([`MIN_EVENTS_PER_WINDOW`]), else one; `start` then leaves out the
/// cores the machine's other work keeps busy (`load`).
fn auto(m: &Sim) -> Result<usize, String> {
    let machine = std::thread::available_parallelism().map_or(1, |c| c.get());
    let cores = match m.parallel.threads.cores {
        0 => machine,
        share => share.min(machine),
    };
    if cores < 2 {
        return Err(if machine < 2 {
            "runs on one thread: the machine has one core".into()
        } else {
            format!("runs on one thread: its share of the machine's {machine} cores is one (the other runs at once take the rest)")
        });
    }
    let windows = (active_span(m) as f64 / m.budget.grid.max(1) as f64).max(1.0);
    let per_window = m.budget.footprint.events / windows;
    if per_window < MIN_EVENTS_PER_WINDOW {
        return Err(format!(
            "runs on one thread: about {per_window:.0} events per window of {} (the smallest link delay), fewer than the {MIN_EVENTS_PER_WINDOW} a second thread needs to gain",
            crate::units::format_duration(m.budget.grid)
        ));
    }
    Ok(cores)
}

/// How long the run is busy: to its end, or, when it stops once every flow is done
/// and every flow has a size, until the last would be done at its host's rate.
fn active_span(m: &Sim) -> Time {
    let flows = &m.ends.flows;
    if !m.budget.stop_when_done || flows.iter().any(|f| f.spec.size.is_none()) {
        return m.budget.end;
    }
    let done = |f: &super::Flow| {
        let rate = m.fabric.net.host_rate(f.spec.src);
        let size = f.spec.size.unwrap_or(0);
        f.spec
            .start
            .saturating_add(crate::engine::tx_time(size, rate))
    };
    flows.iter().map(done).max().unwrap_or(0).min(m.budget.end)
}

/// Runs parallel run `m` up to and including time `t`.
pub(super) fn run_until(m: &mut Sim, t: Time) {
    let Some(mut ps) = m.parallel.par.take() else {
        return;
    };
    let started = Instant::now();
    let n = ps.parts.len();
    let mut lp = ps.lp.clone();
    lp.target = t;
    let first = lp.bound(ps.consts.grid);
    let k = lp.k;
    let sh = Shared {
        parts: &ps.parts,
        mail: &ps.mail,
        owners: &ps.owners,
        reports: (0..n).map(|_| Mutex::new(Report::default())).collect(),
        consts: &ps.consts,
        clock: WindowClock::new(n),
        claims: Claims::new(n, k),
        done: AtomicUsize::new(0),
        awake: Awake::new(n),
        closing: Mutex::new(Closing {
            lp,
            pace: ps.pace.clone(),
            opened: Instant::now(),
        }),
        run: Mutex::new(&mut *m),
    };
    match first {
        Some(b) => sh.clock.publish(k, b),
        None => sh.clock.finish(),
    }
    let ends = std::thread::scope(|s| {
        let others: Vec<_> = (1..n)
            .map(|i| {
                let sh = &sh;
                s.spawn(move || guarded(i, sh))
            })
            .collect();
        let mine = guarded(0, &sh);
        let theirs = others.into_iter().map(|h| h.join().unwrap_or_else(Err));
        std::iter::once(mine)
            .chain(theirs)
            .collect::<Result<Vec<_>, _>>()
    });
    // a thread that panicked (a bug) let the others out: the panic goes on in the
    // caller's thread, as it would have in a sequential run
    let ends = ends.unwrap_or_else(|p| std::panic::resume_unwind(p));
    let Shared { closing, .. } = sh;
    let Closing { lp, mut pace, .. } = closing.into_inner().unwrap();
    for (i, naps) in ends.into_iter().enumerate() {
        pace.naps[i] = naps;
    }
    ps.lp = lp;
    ps.pace = pace;
    let lp = &ps.lp;
    m.budget.end = lp.run_end;
    if lp.failed {
        let mut parts: Vec<_> = ps.parts.iter().map(lock).collect();
        let theirs = parts.iter_mut().find_map(|p| p.budget.failure.take());
        m.budget.failure = m.budget.failure.take().or(theirs);
        m.budget.done = true;
        m.now = m.now.max(lp.now);
    } else {
        m.now = m.now.max(t.min(lp.run_end));
    }
    m.records.wall += started.elapsed().as_secs_f64();
    m.parallel.threads.note = ps.pace.folded(n);
    m.parallel.par = Some(ps);
}

/// `worker`, which lets the other threads out if it panics.
fn guarded(i: usize, sh: &Shared) -> std::thread::Result<pool::Naps> {
    let run = std::panic::AssertUnwindSafe(|| worker(i, sh));
    std::panic::catch_unwind(run).inspect_err(|_| sh.clock.finish())
}

/// One thread's part of a call: in each window its own partition, then any other
/// no thread has claimed yet; the thread that finishes a window's last partition
/// closes it (`close`), and naps when it held the window up (`pool`). Its naps.
fn worker(i: usize, sh: &Shared) -> pool::Naps {
    let n = sh.parts.len();
    let mut naps = lock_closing(sh).pace.naps[i];
    if let Some(left) = naps.left() {
        nap(sh, &mut naps, left); // one a call's end cut short
    }
    let mut seen = usize::MAX;
    while let Some((k, b)) = sh.clock.next(seen) {
        seen = k;
        let mut closes = false;
        let mut ran = 0;
        for p in (0..n).map(|j| (i + j) % n) {
            if !sh.claims.claim(p, k) {
                continue;
            }
            window(p, sh, k, b);
            ran += 1;
            closes |= sh.done.fetch_add(1, Ordering::AcqRel) + 1 == n;
        }
        let held = if closes { close(sh, b, ran == n) } else { None };
        if let Some(d) = naps.ran(ran, n, held, Instant::now) {
            nap(sh, &mut naps, d);
        }
    }
    naps
}

/// Naps for `d` if another thread stays awake. A nap the call's end cuts short goes
/// on when the next call starts.
fn nap(sh: &Shared, naps: &mut pool::Naps, d: std::time::Duration) {
    if !sh.awake.may_nap() {
        naps.woke();
        return;
    }
    sh.clock.nap(d);
    sh.awake.wake();
    if naps.left().is_none() {
        naps.woke();
    }
}

fn lock_closing<'a>(sh: &'a Shared) -> MutexGuard<'a, Closing> {
    sh.closing.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Closes the window that ended at `b` (every partition done; `solo`: one thread ran
/// them all): takes in the reports, runs the run's global event at `b` if there is
/// one, and opens the next window, or ends the call. How long the window took if it
/// took so long that the thread closing it must have lost its core while it held a
/// partition.
fn close(sh: &Shared, b: u128, solo: bool) -> Option<std::time::Duration> {
    let mut c = lock_closing(sh);
    let c = &mut *c;
    let now = Instant::now();
    let held = c.pace.held_up(now - c.opened);
    c.pace.solo += u64::from(solo);
    c.lp.absorb(&sh.reports, b, sh.consts);
    c.opened = now;
    if b == c.lp.global && !c.lp.failed {
        let mut run = sh.run.lock().unwrap_or_else(PoisonError::into_inner);
        (c.lp.global, c.lp.failed) = global_step(&mut run, sh, c.lp.run_end, b);
        c.opened = Instant::now(); // its time is not the next window's
    }
    sh.done.store(0, Ordering::Relaxed);
    match c.lp.bound(sh.consts.grid) {
        Some(next) => sh.clock.publish(c.lp.k, next),
        None => sh.clock.finish(),
    }
    held
}

/// The run's own event at key `b` (a sample, or a controller's wake), on `m` brought
/// up to date from the partitions; the actions it applied are applied to them. The
/// next global key, and whether the run failed (a controller did).
fn global_step(m: &mut Sim, sh: &Shared, run_end: Time, b: u128) -> (u128, bool) {
    m.budget.end = run_end;
    let mut parts: Vec<_> = sh.parts.iter().map(lock).collect();
    let need = match Event::decode(b as u32) {
        Some(Event::Control(_)) => merge::Need::Control,
        _ => merge::Need::Sample,
    };
    merge::sync(m, &mut parts, sh.owners, need);
    run_before(m, b + 1);
    for a in std::mem::take(&mut m.parallel.relay) {
        for p in parts.iter_mut() {
            let applied = merge::apply_to_partition(p, &a, m.now);
            debug_assert!(applied.is_ok(), "{applied:?}: the run applied it");
        }
    }
    let next = m.events.peek_key().unwrap_or(u128::MAX);
    (next, m.budget.done)
}

/// Runs every event of `sim` whose key is below `bound`, each under its key (a
/// window's share of a partition, or of the run's global events).
fn run_before(sim: &mut Sim, bound: u128) {
    while !sim.budget.done {
        let Some(key) = sim.events.pop_before(bound) else {
            break;
        };
        sim.parallel.event_key = key;
        sim.step((key >> 64) as Time, key as u32, &mut |_, _, _| {});
    }
}

/// Partition `i`'s part of window `k` (bound `b`): the mail sent to it in the window
/// before, its events below `b`, its mail out and its report.
fn window(i: usize, sh: &Shared, k: usize, b: u128) {
    let n = sh.parts.len();
    let (inbox, outbox) = (((k + 1) & 1) * n * n, (k & 1) * n * n);
    let mut sim = lock(&sh.parts[i]);
    for src in 0..n {
        let mut inbox = sh.mail[inbox + src * n + i].lock().unwrap();
        for m in inbox.drain(..) {
            let (at, by, pkt) = m.open(&mut sim.fabric.sacks);
            let id = sim.alloc_packet(pkt);
            sim.schedule(at, Event::Arrive(id), by);
        }
    }
    run_before(&mut sim, b);
    let mut mail_min = Time::MAX;
    let pc = sim.parallel.part.as_deref_mut();
    let pc = pc.expect("a partition has its context");
    for (to, out) in pc.outbox.iter_mut().enumerate() {
        if out.is_empty() {
            continue;
        }
        mail_min = out
            .iter()
            .map(|m| m.at)
            .min()
            .unwrap_or(Time::MAX)
            .min(mail_min);
        sh.mail[outbox + i * n + to].lock().unwrap().append(out);
    }
    let last_complete = pc.last_complete;
    *sh.reports[i].lock().unwrap() = Report {
        head: sim.events.peek_time().unwrap_or(Time::MAX),
        mail_min,
        completed: sim.ends.completed,
        last_complete,
        failed: sim.budget.done,
        now: sim.now,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    // up the layers: the test builds its run from a scenario, as a user's run is built,
    // so that the partitions it checks are the ones a partitioned-ties run makes
    use crate::scenario::{load, Format, LoadOptions};
    use std::path::Path;

    const PERMUTATION: &str = r#"
        [simulation]
        duration = "2ms"
        ties = "partitioned"
        [topology]
        kind = "fat_tree"
        k = 4
        link_rate = "10Gbps"
        link_delay = "1us"
        [network]
        buffer = "100pkt"
        ecn_threshold = "15pkt"
        [transport]
        protocol = "dctcp"
        [[workloads]]
        kind = "permutation"
        [output]
        throughput = ["flow", "link"]
        sample_interval = "100us"
    "#;

    fn sim(threads: usize) -> Sim {
        let mut s = load(
            PERMUTATION,
            "test.toml",
            Path::new("."),
            Format::Toml,
            &LoadOptions::default(),
        )
        .expect("valid scenario");
        s.set_threads(threads, true);
        s
    }

    fn summary(s: &mut Sim) -> String {
        let mut r = s.results();
        r.summary.wall_s = 0.0;
        serde_json::to_string(&r.summary).unwrap()
    }

    #[test]
    fn prefetch_hints_change_no_result() {
        // a k = 4 fat-tree is below the hints' threshold; forced on, alone and on two
        // threads (each partition's events hint its own state), the run is the same
        let mut plain = sim(1);
        assert!(!plain.fabric.prefetch);
        plain.run();
        let plain = plain.results();
        assert!(plain.summary.ecn_marks > 0, "the marking path ran");
        for threads in [1, 2] {
            let mut hinted = sim(threads);
            hinted.fabric.prefetch = true;
            hinted.run();
            let hinted = hinted.results();
            assert_eq!(plain.tables, hinted.tables, "{threads} threads");
            assert_eq!(plain.summary.events, hinted.summary.events);
            assert_eq!(plain.summary.ecn_marks, hinted.summary.ecn_marks);
        }
    }

    #[test]
    fn threads_that_nap_leave_their_partitions_to_the_others_with_the_same_results() {
        let mut one = sim(1);
        one.run();
        let mut two = sim(2);
        two.run_until(crate::engine::from_secs(2e-5));
        let ps = two.parallel.par.as_mut().expect("cut in two");
        ps.pace.naps[1].nap_for(std::time::Duration::from_secs(3600));
        two.run();
        let ps = two.parallel.par.as_ref().unwrap();
        assert!(ps.pace.solo * 10 > ps.pace.windows * 9, "{:?}", ps.pace);
        assert_eq!(summary(&mut two), summary(&mut one));
        assert!(two
            .parallel
            .threads_note()
            .unwrap()
            .starts_with("ran on 2 threads, but one thread ran every partition in"));
    }
}
