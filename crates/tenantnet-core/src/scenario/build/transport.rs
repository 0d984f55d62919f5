//! From `[transport]` (and a workload's own `transport` table) to a [`TcpConfig`],
//! with every check that ties the keys together. An error names the key the user
//! wrote: a workload's override where it set the value, else `transport.<key>`, and
//! says which values are defaults.
//!
//! Limits, each to keep the run finite and its integers exact:
//! * a data packet (MSS + header) and an ACK are at most [`MAX_PACKET`] bytes;
//! * the initial window is at most 2^30 bytes, the largest window TCP can advertise
//!   (RFC 7323 §2.3: window scale 14 on a 16-bit window);
//! * every timer (`min_rto`, `max_rto`, `initial_rto`, `delayed_ack_timeout`) is at
//!   least [`MIN_TIMER`]: a timer that fires every picosecond would never let the run
//!   finish.

use super::Ctx;
use crate::engine::Time;
use crate::scenario::parse::{join, ScenarioError};
use crate::scenario::spec::{Protocol, TransportProfile, TransportSpec};
use crate::transport::{CongestionControl, TcpConfig};
use crate::units::{format_duration, ByteSize, Size, MAX_PACKET};

pub use crate::units::MIN_TIMER;

/// The largest initial window, bytes: TCP's largest advertisable window (RFC 7323).
pub const MAX_WINDOW: u64 = 1 << 30;

/// Where transport keys are read: `[transport]` overlaid by a workload's table at `key`.
struct Keys<'a> {
    ctx: &'a Ctx<'a>,
    /// `transport` or `workloads[i].transport`.
    key: &'a str,
}

impl Keys<'_> {
    /// The key that set `field`: the workload's own if it wrote one, else `transport.field`.
    fn at(&self, field: &str) -> String {
        let own = join(self.key, field);
        if self.key != "transport" && self.ctx.written(&own) {
            own
        } else {
            join("transport", field)
        }
    }

    /// Whether the user wrote `field` (in either table).
    fn written(&self, field: &str) -> bool {
        self.ctx.written(&self.at(field))
    }

    fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        self.ctx.err(&self.at(field), message)
    }

    /// `name is 1s` or `name is 1s (the default)`.
    fn shown(&self, field: &str, v: Time) -> String {
        let d = if self.written(field) {
            ""
        } else {
            " (the default)"
        };
        format!("{field} is {}{d}", format_duration(v))
    }

    /// `limit_output_bytes`: a positive size in bytes, at most 1 GB.
    fn output_limit(&self, s: Option<Size>) -> Result<Option<u64>, ScenarioError> {
        const FIELD: &str = "limit_output_bytes";
        match s {
            None => Ok(None),
            Some(Size(ByteSize::Bytes(b))) if (1..=1 << 30).contains(&b) => Ok(Some(b)),
            Some(Size(ByteSize::Bytes(_))) => Err(self.err(
                FIELD,
                "expected a size from 1 byte to 1GB, such as \"256KB\" (Linux's tcp_limit_output_bytes)",
            )),
            Some(Size(ByteSize::Packets(_))) => Err(self.err(
                FIELD,
                "expected a size in bytes, such as \"256KB\", not packets",
            )),
        }
    }

    /// A size in bytes (not packets) of at most [`MAX_PACKET`].
    fn bytes(
        &self,
        s: Option<Size>,
        field: &str,
        default: u32,
        zero_ok: bool,
    ) -> Result<u32, ScenarioError> {
        let b = match s {
            None => return Ok(default),
            Some(Size(ByteSize::Bytes(b))) => b,
            Some(Size(ByteSize::Packets(_))) => {
                return Err(self.err(
                    field,
                    "expected a size in bytes, such as \"1460B\", not packets",
                ))
            }
        };
        if b == 0 && !zero_ok {
            return Err(self.err(field, "expected a positive size in bytes"));
        }
        if b > MAX_PACKET {
            return Err(self.err(
                field,
                format!("expected at most {MAX_PACKET} bytes (the largest packet on the wire)"),
            ));
        }
        Ok(b as u32)
    }

    fn timer(&self, v: Time, field: &str) -> Result<Time, ScenarioError> {
        if v < MIN_TIMER {
            return Err(self.err(field, crate::units::MIN_TIMER_TEXT));
        }
        Ok(v)
    }
}

/// Resolves transport settings `t` (`[transport]` overlaid with a workload's table
/// at `key`, or `key = "transport"` itself) into a config.
pub fn resolve(ctx: &Ctx, t: &TransportSpec, key: &str) -> Result<TcpConfig, ScenarioError> {
    let k = Keys { ctx, key };
    // the profile's values stand where a key is absent
    let d = t.profile.unwrap_or_default().config();
    let mss = k.bytes(t.mss, "mss", d.mss, false)?;
    let header = k.bytes(t.header, "header", d.header, true)?;
    if mss as u64 + header as u64 > MAX_PACKET {
        let field = if k.written("mss") { "mss" } else { "header" };
        return Err(k.err(
            field,
            format!(
                "a full packet (mss {mss} + header {header} bytes) exceeds {MAX_PACKET} bytes, the largest packet on the wire"
            ),
        ));
    }
    let cfg = TcpConfig {
        cc: match t.protocol.unwrap_or(Protocol::Tcp) {
            Protocol::Tcp => d.cc,
            Protocol::Newreno => CongestionControl::NewReno,
            Protocol::Dctcp => CongestionControl::Dctcp,
            Protocol::Cubic => CongestionControl::Cubic,
        },
        mss,
        header,
        ack_size: k.bytes(t.ack_size, "ack_size", d.ack_size, false)?,
        init_cwnd: t.init_cwnd.unwrap_or(d.init_cwnd),
        init_ssthresh: t.init_ssthresh.or(d.init_ssthresh),
        min_rto: k.timer(t.min_rto.map_or(d.min_rto, |x| x.0), "min_rto")?,
        max_rto: k.timer(t.max_rto.map_or(d.max_rto, |x| x.0), "max_rto")?,
        initial_rto: k.timer(
            t.initial_rto.map_or(initial_rto(t, &d), |x| x.0),
            "initial_rto",
        )?,
        dupack_threshold: t.dupack_threshold.unwrap_or(d.dupack_threshold),
        ecn: t.ecn.unwrap_or(d.ecn),
        delayed_ack: t.delayed_ack.unwrap_or(d.delayed_ack),
        delayed_ack_timeout: t.delayed_ack_timeout.map_or(d.delayed_ack_timeout, |x| x.0),
        dctcp_g: t.dctcp_g.unwrap_or(d.dctcp_g),
        dctcp_alpha_init: t.dctcp_alpha_init.unwrap_or(d.dctcp_alpha_init),
        dctcp_cut: t.dctcp_cut.unwrap_or(d.dctcp_cut),
        dctcp_window: t.dctcp_window.unwrap_or(d.dctcp_window),
        limit_output_bytes: k.output_limit(t.limit_output_bytes)?,
        recovery: t.recovery.unwrap_or(d.recovery),
        tlp_timeout: t.tlp_timeout.unwrap_or(d.tlp_timeout),
        quick_acks: t.quick_acks.unwrap_or(d.quick_acks),
        ack_push: t.ack_push.unwrap_or(d.ack_push),
        handshake_rtt: t.handshake_rtt.unwrap_or(d.handshake_rtt),
        cwr_reduction: t.cwr_reduction.unwrap_or(d.cwr_reduction),
        loss_ssthresh: t.loss_ssthresh.unwrap_or(d.loss_ssthresh),
    };
    check(&k, &cfg)?;
    Ok(cfg)
}

/// The initial RTO when `initial_rto` is absent: the profile's, but under the
/// `linux` profile the min RTO as written (Linux's data follows a handshake that
/// put the RTO at its minimum; see [`TransportProfile::Linux`]).
fn initial_rto(t: &TransportSpec, d: &TcpConfig) -> Time {
    match t.profile.unwrap_or_default() {
        TransportProfile::Linux => t.min_rto.map_or(d.min_rto, |x| x.0),
        TransportProfile::Htsim => d.initial_rto,
    }
}

/// The checks that tie a transport's keys together.
fn check(k: &Keys, cfg: &TcpConfig) -> Result<(), ScenarioError> {
    for (f, v) in [
        ("init_cwnd", cfg.init_cwnd),
        ("dupack_threshold", cfg.dupack_threshold),
    ] {
        if v == 0 {
            return Err(k.err(f, "expected at least 1"));
        }
    }
    let window = cfg.init_cwnd as u64 * cfg.mss as u64;
    if window > MAX_WINDOW {
        return Err(k.err(
            "init_cwnd",
            format!(
                "an initial window of {window} bytes ({} segments of {} bytes); expected at most 2^30 bytes, the largest window TCP can advertise (RFC 7323), i.e. at most {} segments",
                cfg.init_cwnd,
                cfg.mss,
                MAX_WINDOW / cfg.mss as u64
            ),
        ));
    }
    if cfg.init_ssthresh == Some(0) {
        return Err(k.err("init_ssthresh", "expected at least 1 segment"));
    }
    if cfg.max_rto < cfg.min_rto {
        let blame = if k.written("max_rto") {
            "max_rto"
        } else {
            "min_rto"
        };
        return Err(k.err(
            blame,
            format!(
                "expected min_rto <= max_rto; {}, {}",
                k.shown("min_rto", cfg.min_rto),
                k.shown("max_rto", cfg.max_rto)
            ),
        ));
    }
    if cfg.delayed_ack {
        k.timer(cfg.delayed_ack_timeout, "delayed_ack_timeout")?;
    }
    for (f, v) in [
        ("dctcp_g", cfg.dctcp_g),
        ("dctcp_alpha_init", cfg.dctcp_alpha_init),
    ] {
        if !(0.0..=1.0).contains(&v) || (f == "dctcp_g" && v == 0.0) {
            let range = if f == "dctcp_g" { "(0, 1]" } else { "[0, 1]" };
            return Err(k.err(f, format!("expected a number in {range}")));
        }
    }
    Ok(())
}

/// Checks that a transport's packets fit a buffer of `buffer` bytes written at
/// `buffer_key`: blames the buffer if the user sized it, else the packet size.
pub fn fits(
    ctx: &Ctx,
    cfg: &TcpConfig,
    key: &str,
    buffer: u64,
    buffer_key: &str,
) -> Result<(), ScenarioError> {
    let k = Keys { ctx, key };
    for (field, size) in [
        ("mss", cfg.packet_size()),
        ("ack_size", cfg.ack_size as u64),
    ] {
        if size <= buffer {
            continue;
        }
        let what = if field == "mss" {
            format!(
                "a full packet ({size} bytes: mss {} + header {})",
                cfg.mss, cfg.header
            )
        } else {
            format!("an ACK ({size} bytes)")
        };
        let msg = format!(
            "{what} does not fit {buffer_key} ({buffer} bytes), so it would always be dropped"
        );
        return Err(if ctx.written(buffer_key) && !k.written(field) {
            ctx.err(buffer_key, msg)
        } else {
            let f = if field == "mss" && !k.written("mss") {
                "header"
            } else {
                field
            };
            k.err(f, msg)
        });
    }
    Ok(())
}
