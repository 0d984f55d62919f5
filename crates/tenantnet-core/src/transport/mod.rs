//! Transports: TCP NewReno, DCTCP and CUBIC senders (loss recovery by NewReno, SACK or
//! RACK-TLP) and receivers, UDP sources.
//!
//! Each is a state machine that the simulator drives with arrivals and timer
//! events and that answers with segments to send and timers to schedule; none of
//! them touches the network directly, which keeps them testable on their own.

pub mod cubic;
pub mod dctcp;
pub mod rack;
pub mod rtt;
pub mod sack;
pub mod tcp_receiver;
pub mod tcp_sender;
pub mod udp;

use crate::engine::Time;

/// TCP congestion control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionControl {
    /// NewReno (RFC 5681, RFC 6582); with `ecn`, RFC 3168's response to ECE.
    NewReno,
    /// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
    Dctcp,
    /// CUBIC (RFC 9438) as Linux's `tcp_cubic.c`, its slow start Reno's ended by
    /// HyStart; with `ecn`, ECE is answered as a loss.
    Cubic,
}

impl CongestionControl {
    /// Its name in tenantnet's scenarios and results (Linux calls NewReno `reno`).
    pub fn name(self) -> &'static str {
        match self {
            CongestionControl::NewReno => "newreno",
            CongestionControl::Dctcp => "dctcp",
            CongestionControl::Cubic => "cubic",
        }
    }
}

/// Parameters of a TCP connection. Sizes are bytes, times picoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Congestion control.
    pub cc: CongestionControl,
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Header bytes added to each data segment on the wire.
    pub header: u32,
    /// Size of a pure ACK on the wire.
    pub ack_size: u32,
    /// Initial congestion window, in segments.
    pub init_cwnd: u32,
    /// Initial slow-start threshold, in segments (`None`: unbounded).
    pub init_ssthresh: Option<u32>,
    /// Lower bound on the retransmission timeout.
    pub min_rto: Time,
    /// Upper bound on the retransmission timeout (after backoff).
    pub max_rto: Time,
    /// Retransmission timeout before the first RTT sample.
    pub initial_rto: Time,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Whether data segments are ECN-capable and NewReno responds to ECE.
    pub ecn: bool,
    /// Delayed ACKs (RFC 1122: ACK every second segment or on a timer).
    pub delayed_ack: bool,
    /// Delayed-ACK timer.
    pub delayed_ack_timeout: Time,
    /// DCTCP's EWMA gain g.
    pub dctcp_g: f64,
    /// DCTCP's α at connection start.
    pub dctcp_alpha_init: f64,
    /// When DCTCP cuts its window.
    pub dctcp_cut: DctcpCut,
    /// How DCTCP delimits the windows over which it updates α.
    pub dctcp_window: DctcpWindow,
    /// TCP small queues: the most data bytes a sender may have in its host, not yet
    /// on the wire, or `None` (no limit). See [`TcpConfig::small_queue_limit`].
    pub limit_output_bytes: Option<u64>,
    /// How losses are detected and repaired.
    pub recovery: Recovery,
    /// How the tail loss probe's timeout is set (`recovery = "rack"`).
    pub tlp_timeout: TlpTimeout,
    /// Segments acknowledged at once at the start of a connection, delayed ACKs
    /// or not (Linux's quick-ACK mode, `TCP_MAX_QUICKACKS` = 16).
    pub quick_acks: u32,
    /// With delayed ACKs, whether the segment that ends the application's data is
    /// acknowledged at once (Linux, for a PSH segment the application reads).
    pub ack_push: bool,
    /// Whether a sender starts with the RTT sample its connection's handshake would
    /// have given (`transport.handshake_rtt`; Linux's `tcp_synack_rtt_meas`).
    pub handshake_rtt: bool,
    /// How the window comes down after ECE (with SACK).
    pub cwr_reduction: CwrReduction,
    /// What ssthresh halves on a loss.
    pub loss_ssthresh: LossSsthresh,
}

crate::kinds::named_kinds! {
    /// How a TCP sender detects and repairs losses (`transport.recovery`).
    Recovery {
        /// Cumulative ACKs only: NewReno's fast retransmit and fast recovery (RFC 6582), one hole repaired per round trip, go-back-N after a timeout.
        NewReno = "newreno",
        /// Cumulative ACKs only, as Linux (and ns-3) recover without SACK: duplicate ACKs counted as segments SACKed for the pipe (`tcp_add_reno_sack`), Linux's Proportional Rate Reduction, one retransmission per partial ACK, go-back-N after a timeout.
        RenoSack = "reno_sack",
        /// SACK (RFC 2018, D-SACK of RFC 2883) with RFC 6675's scoreboard and Proportional Rate Reduction (RFC 6937), as Linux repairs losses; after a timeout only the holes are resent.
        Sack = "sack",
        /// SACK as above with RACK-TLP loss detection (RFC 8985), Linux's default since 4.18: a segment is lost when one sent after it was delivered and an RTT plus a reordering window has passed; a tail loss is found by a probe two round trips after the last ACK; lost retransmissions are sent again without waiting for the timeout.
        Rack = "rack",
    }
}

impl Recovery {
    /// Whether ACKs carry SACK blocks.
    pub fn uses_sack(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Rack)
    }
}

crate::kinds::named_kinds! {
    /// How the tail loss probe's timeout is set (`transport.tlp_timeout`).
    TlpTimeout {
        /// RFC 8985 §7.2: two smoothed RTTs, plus the delayed-ACK timeout when one segment is out and the receiver delays ACKs; never past the retransmission timer.
        Rfc8985 = "rfc8985",
        /// Linux's `tcp_schedule_loss_probe`: two smoothed RTTs plus 2 ms (TCP_TIMEOUT_MIN), or plus the minimum RTO when one segment is out; never past the retransmission timer.
        Linux = "linux",
    }
}

crate::kinds::named_kinds! {
    /// How the window comes down after ECE (`transport.cwr_reduction`).
    CwrReduction {
        /// At once: cwnd becomes cwnd·(1 − α/2) for DCTCP, half for NewReno (the DCTCP paper, RFC 8257, RFC 3168, htsim).
        Immediate = "immediate",
        /// With SACK, a little on each ACK by Proportional Rate Reduction until the window's data is acknowledged, as Linux's CWR state does (`tcp_cwnd_reduction`); a loss meanwhile continues the same reduction.
        Prr = "prr",
    }
}

crate::kinds::named_kinds! {
    /// What ssthresh halves when a loss is found or the retransmission timer expires (`transport.loss_ssthresh`).
    LossSsthresh {
        /// The flight, max(FlightSize/2, 2·MSS) (RFC 5681 eq. 4, RFC 6582, RFC 6675 §5, htsim); at a timeout with SACK the smaller of the flight and the window, as Linux's `tcp_enter_loss`.
        Flight = "flight",
        /// The window, max(cwnd/2, 2·MSS), on every loss response: Linux's Reno (`tcp_reno_ssthresh`) and ns-3's TcpLinuxReno. With SACK the flight counts SACKed bytes above a hole, which are not in the network, and so can exceed the window.
        Cwnd = "cwnd",
    }
}

crate::kinds::named_kinds! {
    /// When DCTCP cuts its window by alpha/2 (`transport.dctcp_cut`).
    DctcpCut {
        /// Once per window of data, on an ACK carrying ECE (DCTCP, SIGCOMM 2010, §3.1; RFC 8257 §3.3; Linux).
        OnEce = "on_ece",
        /// At the end of every window of data while alpha > 0, marked or not, leaving slow start on the first ECE (htsim's DCTCPSrc::receivePacket).
        EveryWindow = "every_window",
    }
}

crate::kinds::named_kinds! {
    /// How DCTCP delimits the windows over which α is updated (and, with
    /// `dctcp_cut = "every_window"`, the window cut) (`transport.dctcp_window`).
    DctcpWindow {
        /// One round trip of data: until the cumulative ACK passes the next sequence number at the window's start (DCTCP, SIGCOMM 2010, §3.1; RFC 8257 §3.3; Linux).
        Sequence = "sequence",
        /// ACK packets, each counting one segment, until they reach the congestion window at the previous window's end (2 segments at first), duplicates included (htsim's DCTCPSrc::receivePacket).
        Acks = "acks",
    }
}

impl TcpConfig {
    /// A fresh DCTCP estimator as this configuration sets it up.
    pub fn dctcp_estimator(&self) -> dctcp::DctcpEstimator {
        let d = dctcp::DctcpEstimator::new(self.dctcp_alpha_init, self.dctcp_g);
        match self.dctcp_window {
            DctcpWindow::Sequence => d,
            DctcpWindow::Acks => d.counting_acks(self.mss as u64),
        }
    }

    /// Bytes on the wire of a full-size data segment.
    pub fn packet_size(&self) -> u64 {
        self.mss as u64 + self.header as u64
    }

    /// The TCP-small-queues allowance of a sender (`u64::MAX`: none): the most
    /// bytes of its data its host may hold once it has sent. Linux's
    /// `tcp_small_queue_check` throttles a socket when the bytes it already has in
    /// the qdisc and NIC exceed the limit, min(`tcp_limit_output_bytes`, max(two
    /// packets, about 1 ms at the pacing rate)); so a segment may still go when
    /// they are at the limit, and the host holds up to the limit plus one packet.
    /// The pacing-rate term is left out: at datacenter rates it is far above the
    /// sysctl (1 ms at 10 Gb/s is 1.25 MB), so the sysctl is the limit.
    pub fn small_queue_limit(&self) -> u64 {
        self.limit_output_bytes
            .map_or(u64::MAX, |b| b + self.packet_size())
    }

    /// Whether data segments carry ECT.
    pub fn ect(&self) -> bool {
        self.ecn || self.cc == CongestionControl::Dctcp
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CongestionControl::NewReno,
            mss: 1460,
            header: 40,
            ack_size: 64,
            init_cwnd: 10,
            init_ssthresh: None,
            min_rto: 10_000_000_000,
            max_rto: 1_000_000_000_000,
            initial_rto: 10_000_000_000,
            dupack_threshold: 3,
            ecn: false,
            delayed_ack: false,
            delayed_ack_timeout: 1_000_000_000,
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 1.0,
            dctcp_cut: DctcpCut::OnEce,
            dctcp_window: DctcpWindow::Sequence,
            limit_output_bytes: None,
            recovery: Recovery::NewReno,
            tlp_timeout: TlpTimeout::Rfc8985,
            quick_acks: 0,
            ack_push: false,
            handshake_rtt: false,
            cwr_reduction: CwrReduction::Immediate,
            loss_ssthresh: LossSsthresh::Flight,
        }
    }
}
