//! A sender's state as a trace shows it, in the names Linux gives its congestion
//! states (`tcp_ca_state`), and what else a trace reads.

use super::{TcpSender, Time};

crate::kinds::named_kinds! {
    /// A sender's congestion state (Linux's `TCP_CA_*`).
    CaState {
        /// Nothing amiss.
        Open = "open",
        /// Duplicate ACKs (or SACKed data) seen, recovery not started.
        Disorder = "disorder",
        /// The window coming down after ECE, until the data sent before the cut is acknowledged.
        Cwr = "cwr",
        /// Fast recovery, until its recovery point is acknowledged.
        Recovery = "recovery",
        /// After a retransmission timeout, until the data sent before it is acknowledged.
        Loss = "loss",
    }
}

impl TcpSender {
    /// The congestion state, the first that holds of loss, recovery, CWR and
    /// disorder (Linux's order of precedence), else open.
    pub fn ca_state(&self) -> CaState {
        if self.snd_una < self.loss_until {
            CaState::Loss
        } else if self.in_recovery {
            CaState::Recovery
        } else if self.snd_una < self.cwr_end {
            CaState::Cwr
        } else if self.dupacks > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        }
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Time> {
        self.rtt.srtt()
    }
}
