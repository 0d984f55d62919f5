//! The state of a run, in the parts that own it: the fabric, the hosts' vswitches,
//! the transports' endpoints, the records, the run's budget and its control plane.
//! [`Sim`](super::Sim) holds one of each beside the event queue and the clock; this
//! is also the partition of state a parallel engine cuts along (the control plane
//! reads every part, so it runs between windows).

use super::cpu::CpuState;
use super::footprint::Footprint;
use super::parallel::{ParState, PartCtx, Threads};
use super::queries::ExchangeState;
use super::recorder::Recorder;
use super::results::RunMeta;
use super::sack_store::SackStore;
use super::vm_results::VmRateCols;
use super::{Counters, Flow, RunFailure};
use crate::control::{Controller, Controllers, FabricView};
use crate::engine::Time;
use crate::net::host_nic::AckRoutes;
use crate::net::{FlowId, Network, NodeKind, Packet, PacketPool, PktId};
use crate::transport::tcp_receiver::ReceiverOut;
use crate::transport::tcp_sender::SenderOut;
use crate::transport::TcpConfig;
use crate::vswitch::policy::ControlMsg;
use crate::vswitch::{HostVswitch, ShaperId, Shapers, Vm, VmPair};

/// The fabric: hosts and switches joined by ports, the packets in flight, and what
/// travels with a flow's packets (the ACKs' routes, SACK options).
pub struct Fabric {
    /// The network: nodes, ports, routing.
    pub net: Network,
    /// Each node's kind, by `NodeId` (host or switch), for the arrival's dispatch.
    pub(super) node_kind: Vec<NodeKind>,
    /// The packets in flight.
    pub(super) pkts: PacketPool,
    /// Packets a port's buffer policy evicted on the last admission: (queue, packet).
    pub(super) evicted: Vec<(usize, PktId)>,
    /// The flows' ACK routes when ACKs retrace the data's path.
    pub(super) ack_routes: Option<AckRoutes>,
    /// The SACK options of ACKs in flight (empty unless a flow uses SACK).
    pub(super) sacks: SackStore,
    /// Whether a packet reaching a host meets the vswitch's CPU model before its
    /// transport (a flag beside the fabric's state, so that runs without the model
    /// pay one test of a field already in cache rather than of the hosts' `Option`).
    pub(super) host_hook: bool,
    /// Whether each event hints the processor to load what the next ones read
    /// ([`crate::engine::prefetch`]): on where the ports outgrow the caches
    /// ([`PREFETCH_ABOVE`](super::fabric::PREFETCH_ABOVE)).
    pub(super) prefetch: bool,
    /// When a host's packet may reach its NIC without its `Handoff` event
    /// (`sim/handoff.rs`).
    pub(super) handoffs: super::handoff::Handoffs,
}

/// The hosts' vswitches: the VMs, their pairs and shapers, each host's policy and
/// its tick, and the vswitch's CPU if it costs cycles.
pub struct Hosts {
    /// The VMs, indexed by `VmId`.
    pub vms: Vec<Vm>,
    /// Each host's vswitch: its policy and the VMs it serves.
    pub(super) vswitches: Vec<HostVswitch>,
    /// The interval of the hosts' ticks (0: none).
    pub(super) tick: Time,
    /// The scenario key that set it.
    pub(super) tick_key: String,
    /// The directed VM pairs and what the datapath counted on them.
    pub(super) pairs: Vec<VmPair>,
    /// The VMs' shapers (and Trinity's and ElasticSwitch's channels).
    pub(super) shapers: Shapers,
    /// Shapers whose state changed in the last step, to be served: a reused buffer.
    pub(super) touched_shapers: Vec<ShaperId>,
    /// Control packets the policies asked to send in the last step: a reused buffer.
    pub(super) control_out: Vec<ControlMsg>,
    /// Packets the policies released from holding in the last step: a reused buffer.
    pub(super) released: Vec<Packet>,
    /// The `vm_rates` table's columns, a row per VM per tick.
    pub(super) vm_rates: VmRateCols,
    /// The vswitch's PMD cores, if it costs CPU.
    pub(super) cpu: Option<Box<CpuState>>,
}

/// The transports' endpoints: the flows (each a sender and a receiver), their TCP
/// configurations, the order they start in and the request–response gates.
pub struct Endpoints {
    /// The flows, indexed by `FlowId`.
    pub flows: Vec<Flow>,
    /// Transport configurations that flows index.
    pub(super) tcp: Vec<TcpConfig>,
    /// The scenario's seed, from which a flow's transport state is made when first
    /// needed ([`Endpoints::ep`]).
    pub(super) seed: u64,
    /// Flows without a gate, by start time.
    pub(super) start_order: Vec<u32>,
    /// The next of `start_order` to start.
    pub(super) next_start: usize,
    /// What a TCP sender's last step emitted: a reused buffer.
    pub(super) sender_out: SenderOut,
    /// What a TCP receiver's last step emitted: a reused buffer.
    pub(super) receiver_out: ReceiverOut,
    /// Flows with a size.
    pub(super) finite_flows: u64,
    /// Of those, how many completed.
    pub(super) completed: u64,
    /// Whether any flow has a TCP-small-queues limit: the default path then skips
    /// every check of it.
    pub(super) small_queues: bool,
    /// Gates and queries of request–response workloads.
    pub(super) exchanges: ExchangeState,
    /// Senders their small queue woke in this event, in order: the loop resumes
    /// them when the event's handler is done (`Sim::resume_senders`).
    pub(super) resume: Vec<FlowId>,
}

/// What the run records: counters, periodic samples, its names and wall time.
pub struct Records {
    /// Packet counters.
    pub counters: Counters,
    /// Throughput and queue samples.
    pub(super) recorder: Recorder,
    /// Names and descriptions for the results.
    pub(super) meta: RunMeta,
    /// Wall-clock seconds spent running.
    pub(super) wall: f64,
    /// Of `wall`, the time spent in controllers' wakes.
    pub(super) control_wall: f64,
    /// The packets captured (`[output] capture`).
    pub(super) capture: Option<Box<super::capture::Capture>>,
    /// The traced flows' state (`[output] trace_flows`, `trace_fraction`).
    pub(super) flow_trace: Option<Box<super::flow_trace::FlowTrace>>,
}

/// The run's budget: when it ends, the memory it may use, and why it stopped early.
pub struct RunBudget {
    /// The time the run ends.
    pub(super) end: Time,
    /// End when every finite flow has completed.
    pub(super) stop_when_done: bool,
    /// Whether it has ended (every flow done, or a failure).
    pub(super) done: bool,
    /// The scenario's seed.
    pub(super) seed: u64,
    /// The memory the run was estimated to need.
    pub(super) footprint: Footprint,
    /// The memory it may use, bytes.
    pub(super) memory: u64,
    /// Why it stopped before its end, if it did.
    pub(super) failure: Option<RunFailure>,
    /// The smallest delay of any link: the grid a run that stops when every flow is
    /// done (under partitioned ties) stops on (`RunBudget::stop_all_done`).
    pub(super) grid: Time,
    /// Every flow is done and the run goes on to its new end: the loop clears `done`.
    pub(super) drain: bool,
}

/// The run's control plane: the fabric controllers (QShare's) beside the scenario's
/// scheduled changes, each woken when it asks, reading every part through a
/// [`FabricView`]; the loop applies what they ask for (`sim/control.rs`).
pub struct ControlPlane {
    /// The controllers, indexed by their `Event::Control` number.
    pub(super) controllers: Vec<Controllers>,
}

impl RunBudget {
    /// The run stops now (`at`) with a failure: the scenario key behind it and why.
    pub(super) fn stop(&mut self, at: Time, key: &str, message: String) {
        self.failure = Some(RunFailure {
            at,
            key: key.to_string(),
            message,
        });
        self.done = true;
    }

    /// Every sized flow is done at `now` and the run stops when they are. Under
    /// scheduled ties it stops at once. Under partitioned ties, where no partition of
    /// a parallel run knows the moment the others finish, it runs on to the end of
    /// the current step of the grid of link delays (the first multiple of the
    /// smallest link delay after now), the same instant for any number of threads.
    pub(super) fn stop_all_done(&mut self, now: Time, ties: crate::engine::queue::Ties) {
        let g = self.grid;
        if ties == crate::engine::queue::Ties::Partitioned && g > 0 {
            self.end = self.end.min(super::parallel::grid_after(now, g));
            self.drain = true;
        }
        self.done = true;
    }

    /// The time the run ends.
    pub fn end(&self) -> Time {
        self.end
    }

    /// Whether the run has reached its end at `now` (the duration, or every flow
    /// done when it stops when they are).
    pub fn finished(&self, now: Time) -> bool {
        self.done || now >= self.end
    }

    /// The memory the run was estimated to need before it started.
    pub fn footprint(&self) -> &Footprint {
        &self.footprint
    }

    /// Why the run stopped early, if it did (it outgrew its memory budget).
    pub fn failure(&self) -> Option<&RunFailure> {
        self.failure.as_ref()
    }

    /// Memory in use with `u`, estimated as the footprint's fixed part plus the rows
    /// recorded and packet slots allocated, at the footprint's costs.
    pub fn in_use(&self, u: &super::footprint::MemoryUse) -> f64 {
        use super::footprint::PER_VM_RATE_ROW;
        use super::footprint::{PartKind, PER_PACKET, PER_QUEUE_ROW, PER_SAMPLE_ROW};
        self.footprint.of(PartKind::Fixed)
            + u.sample_rows as f64 * PER_SAMPLE_ROW
            + u.queue_rows as f64 * PER_QUEUE_ROW
            + u.vm_rate_rows as f64 * PER_VM_RATE_ROW
            + u.packet_slots as f64 * PER_PACKET
            + u.sack_bytes as f64
    }

    /// Stops the run at `now` if it uses more memory than its budget with `u`;
    /// `key` is the scenario key behind what just grew.
    pub(super) fn check_memory(&mut self, now: Time, key: &str, u: super::footprint::MemoryUse) {
        if self.in_use(&u) > self.memory as f64 {
            self.out_of_memory(now, key, u);
        }
    }

    /// The run stops at `now`: with `u` it outgrew its memory (`key`: what grew,
    /// `network.buffer` for packets).
    #[cold]
    pub(super) fn out_of_memory(&mut self, now: Time, key: &str, u: super::footprint::MemoryUse) {
        use super::footprint::human_bytes;
        let what = if key == "network.buffer" {
            format!(
                "{} packets were alive at once: buffers, windows or links' bandwidth-delay products hold more than the budget allows",
                u.packet_slots
            )
        } else {
            let rows = u.sample_rows + u.queue_rows + u.vm_rate_rows;
            format!("it had recorded {rows} rows: record less (a longer output.sample_interval, fewer output.throughput scopes, output.queues = false)")
        };
        let message = format!(
            "the run stopped at {} simulated: it used about {} of memory, more than the memory budget of {} (raise it with --memory-budget); {what}",
            crate::units::format_duration(now),
            human_bytes(self.in_use(&u)),
            human_bytes(self.memory as f64)
        );
        self.stop(now, key, message);
    }
}

impl ControlPlane {
    /// How many controllers there are.
    pub(super) fn len(&self) -> usize {
        self.controllers.len()
    }

    /// Whether there are none.
    pub(super) fn is_empty(&self) -> bool {
        self.controllers.is_empty()
    }

    /// When controller `i` next wants to wake, after `now`.
    pub(super) fn next_wake(&self, i: usize, now: Time) -> Option<Time> {
        self.controllers[i].next_wake(now)
    }

    /// Controller `i` wakes on `view` and appends what it asks for to `actions`.
    pub(super) fn wake(
        &mut self,
        i: usize,
        view: &FabricView,
        actions: &mut Vec<crate::control::Action>,
    ) -> Result<(), String> {
        self.controllers[i].wake(view, actions)
    }

    /// What every controller recorded.
    pub(super) fn tables(&self, net: &Network) -> Vec<crate::table::Table> {
        (self.controllers.iter())
            .flat_map(|c| c.tables(net))
            .collect()
    }
}

/// The run's threads: in the run a parallel run is of, its partitions; in a
/// partition, which one it is and its mail (`sim/parallel`).
#[derive(Default)]
pub struct Parallelism {
    /// In a partition: which one it is, the partition of each port's far end, its
    /// mail.
    pub(super) part: Option<Box<PartCtx>>,
    /// Whether packets going on the wire take `Sim::on_wire_hook`: per-tenant link
    /// counts, or a partition's mail.
    pub(super) wire_hook: bool,
    /// In the run a parallel run is of: its partitions and where their windows stand.
    pub(super) par: Option<Box<ParState>>,
    /// The threads asked for, and why the run uses one if it does.
    pub(super) threads: Threads,
    /// Whether this is the run a parallel run is of: its hosts' vswitches run in
    /// their partitions, never here.
    pub(super) coordinator: bool,
    /// In a window of a parallel run, the key of the event being handled.
    pub(super) event_key: u128,
    /// The actions applied here while the partitions were out (a controller's, in a
    /// window's global step), to be applied to them after it.
    pub(super) relay: Vec<crate::control::Action>,
}

impl Parallelism {
    /// The threads the run uses (the partitions it was cut into, or 1).
    pub fn threads_used(&self) -> usize {
        self.par.as_ref().map_or(1, |p| p.len())
    }

    /// Why the run uses one thread although more were allowed, once it has started.
    pub fn threads_note(&self) -> Option<&str> {
        self.threads.note.as_deref()
    }

    /// Lets the run use up to `threads` threads (`Sim::set_threads`), unless it has
    /// `started`.
    pub(super) fn ask(&mut self, threads: usize, exact: bool, started: bool) {
        if !started && self.par.is_none() {
            self.threads = Threads {
                asked: threads,
                exact,
                cores: self.threads.cores,
                note: None,
            };
        }
    }

    /// Lets a run whose threads are chosen for it (`Sim::set_threads(0, _)`, the
    /// default) take at most `cores` of the machine's cores (0: all of them): its
    /// share when other simulations run beside it. Before the run starts (the
    /// caller checks).
    pub fn share(&mut self, cores: usize) {
        if self.par.is_none() {
            self.threads.cores = cores;
        }
    }
}
