//! Trinity's rate controllers for R_W, as pure functions.
//!
//! * [`paper_step`]: §III-C, run at a host when a channel's feedback arrives (and
//!   every interval, to follow which channels are active).
//!   C_W = C − Σ B_X (Eq. 2) is the host's spare capacity. Congestion-free channels
//!   (P) share C_P = C_W − Σ_{Q} R_W (Eq. 3) in proportion to their guarantees
//!   (Eq. 4). A channel whose red packets were marked (β > 0) moves to the
//!   congestion-caution set Q, where R_W ← (1 − β/2)·R_W (Eq. 5) on marks and
//!   R_W ← min(R_P, (1 + α)·R_W) (Eq. 6) without, returning to P once it reaches
//!   R_P. A trapped channel (its receiver saw no red packet while it sent red)
//!   gets R_W = 10 Kb/s and moves to Q (§III-C Problem #2).
//!   Where the paper is silent (spec §5): R_P(c) = (C_W − Σ_{u∈Q, u≠c} R_W^u) ·
//!   R_G^c / (R_G^c + Σ_{u∈P} R_G^u), Eq. 4 as if c were in P (#3); Q is updated
//!   first, from the rates before this period's updates, a channel just moved from
//!   P applying Eq. 5 at once (#4); an inactive channel leaves P and Q and is offered
//!   R_P for when it returns (#6). Only the channels whose feedback arrived (`heard`)
//!   move between the sets or apply Eqs. 5–6; P is re-shared (Eq. 4) at every step.
//!   The `refined` profile's departures are flags of [`Gains`]: `cwr`, `probe`,
//!   `ecn_gain`, `untrap` and `keep_idle`, each off for `paper`.
//! * [`code_step`]: the public module's update on each feedback (`trinity.c:359,368`):
//!   R_W ← ⌊R_W·(200 − F)/200⌋ on F % marked, else R_W grows by half the gap
//!   between R_G + R_W and the NIC (at least 10 Mb/s), in whole Mb/s.

use crate::vswitch::channels::{decode_epoch, decode_paper, Channels, Tx};
use crate::vswitch::shaper::Shapers;

/// A sending channel's rate-control state, as the Trinity module keeps it for the
/// two schemes it runs (Trinity, and C-ES when compiled without `-DTRINITY`), with
/// `own`, what a scheme keeps beside it (ElasticSwitch's paper RA; nothing for
/// Trinity). The paper's controller runs over any of them.
#[derive(Clone, Debug, Default)]
pub struct Rate<X = ()> {
    /// The paper's controller's view of it.
    pub rc: RcChannel,
    /// The rate the module's controller sets, whole Mb/s (`code`: R_W; C-ES: R).
    pub mbps: u64,
    /// The scheme's own state.
    pub own: X,
}

impl<X> Rate<X> {
    /// A channel's state at the start: R_G = `g`, R_W = `w` (bit/s), the module's
    /// rate `mbps`, the scheme's `own`.
    pub fn start(g: u64, w: f64, mbps: u64, own: X) -> Self {
        let rc = RcChannel {
            g: g as f64,
            w,
            beta_avg: 1.0,
            ..Default::default()
        };
        Rate { rc, mbps, own }
    }
}

/// A paper feedback `word` for channel `t` arrived: its β and, with `trapping`
/// (anti-trapping on), whether it is trapped. The paper's test (T:L718-728) is that
/// the receiver got no red packet in its last period while the sender sent red in
/// its own; read literally, red sent late in the period, or a lone red packet of a
/// slow channel sent just before the period began, has not arrived yet and the
/// channel is "trapped" (at a 1 ms interval this held a lone tenant at its guarantee
/// for 40 ms at start, and kept a channel with a few Mb/s of red trapping itself
/// again and again). Our reading: trapped when no red arrived in the receiver's last
/// period although the sender sent red both in that period and in the one before,
/// so red was leaving all through the period the receiver measured.
pub fn heard<X>(t: &mut Tx<Rate<X>>, word: u64, trapping: bool) {
    let (beta, no_red) = decode_paper(word);
    hear(t, beta, no_red, trapping);
}

/// Channel `t` heard β (`no_red`: no red packet arrived) from its receiver.
fn hear<X>(t: &mut Tx<Rate<X>>, beta: f64, no_red: bool, trapping: bool) {
    let rc = &mut t.st.rc;
    rc.beta = beta;
    rc.trapped = trapping && no_red && t.red_before > 0 && t.red_last > 0;
    rc.delivered = !no_red;
    rc.heard = true;
}

/// An epoch feedback `word` (the `refined` profile) for channel `t` arrived, its
/// shaper's red epoch now `epoch`: as [`heard`], and whether the red packets it
/// counts were sent before the channel's last cut (`stale`: an older epoch; their
/// marks were made by the queue that cut is draining).
pub fn heard_epoch<X>(t: &mut Tx<Rate<X>>, word: u64, epoch: u16, trapping: bool) {
    let (beta, no_red, counted) = decode_epoch(word);
    hear(t, beta, no_red, trapping);
    t.st.rc.stale = !no_red && counted != epoch;
}

/// One step of the paper's controller ([`paper_step`]) over a host's channels, and
/// `apply` for each channel whose R_W changed (`rc.cut`: by Eq. 5).
pub fn control<X>(
    ch: &mut Channels<Rate<X>>,
    gains: &Gains,
    mut apply: impl FnMut(&Tx<Rate<X>>, &mut Shapers),
    shapers: &mut Shapers,
) {
    let mut chans: Vec<RcChannel> = (ch.tx.iter())
        .map(|t| RcChannel {
            active: t.active,
            ..t.st.rc
        })
        .collect();
    paper_step(&mut chans, ch.c_w, gains);
    for (t, mut c) in ch.tx.iter_mut().zip(chans) {
        c.heard = false;
        let changed = c.w != t.st.rc.w;
        t.st.rc = c;
        if changed {
            apply(t, shapers);
        }
    }
}

/// One channel as the paper's rate controller sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RcChannel {
    /// R_G, bit/s.
    pub g: f64,
    /// R_W, bit/s.
    pub w: f64,
    /// In the congestion-caution set Q (else in P).
    pub caution: bool,
    /// Whether it sent or held packets in the last interval.
    pub active: bool,
    /// β: the fraction of its red packets that arrived marked in the last interval.
    pub beta: f64,
    /// Its receiver saw no red packet in the last interval while it sent red.
    pub trapped: bool,
    /// Its feedback (`beta`, `trapped`) arrived since its last step.
    pub heard: bool,
    /// Its last step cut R_W (Eq. 5).
    pub cut: bool,
    /// Its feedback counted red packets sent before its last cut (`refined`).
    pub stale: bool,
    /// R_W just before its last cut by Eq. 5 (0: never cut).
    pub w_cut: f64,
    /// β averaged over its feedback as DCTCP averages its α (`ecn_gain`); 1 at
    /// the start and when it enters Q.
    pub beta_avg: f64,
    /// Its last feedback found red delivered.
    pub delivered: bool,
    /// R_W when it was last found trapped (0: not trapped since).
    pub w_trap: f64,
}

/// The paper controller's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// α of Eq. 6.
    pub alpha: f64,
    /// R_W of a trapped channel, bit/s.
    pub trap: f64,
    /// Whether the marks reported right after a cut are not applied again (see
    /// `TrinityParams::hold`).
    pub hold: bool,
    /// Whether marks reported with red packets sent before the last cut are not
    /// applied (the `refined` profile: R_W is cut at most once per feedback round
    /// trip, DCTCP's and Linux's CWR rule).
    pub cwr: bool,
    /// With `Some((near, step))` (the `refined` profile), a caution channel at or
    /// above `near` × its R_W before the last cut grows by `step` · R_G an interval
    /// instead of Eq. 6's × (1 + α), and below it by Eq. 6 but not past it: it probes
    /// slowly where it was last marked.
    pub probe: Option<(f64, f64)>,
    /// DCTCP's gain g: Eq. 5 cuts by β averaged over the channel's feedback (the
    /// `refined` profile; 0: by the last interval's β, as the paper).
    pub ecn_gain: f64,
    /// Whether a trapped channel whose red is delivered again leaves the trap at
    /// half the R_W it was trapped at (`refined`) instead of growing from the trap
    /// rate by Eq. 6.
    pub untrap: bool,
    /// Whether a caution channel that fell idle keeps its R_W and its place in Q
    /// (`refined`) instead of being offered R_P for when it returns.
    pub keep_idle: bool,
}

/// R_P of channel `i`: its Eq. 4 share were it in P (spec §5 #3).
fn r_p(ch: &[RcChannel], i: usize, c_w: f64, sum_q_w: f64, sum_p_g: f64) -> f64 {
    let c = &ch[i];
    let q_others = sum_q_w - if c.caution { c.w } else { 0.0 };
    let p_g = sum_p_g + if c.caution { c.g } else { 0.0 };
    if p_g <= 0.0 {
        return 0.0;
    }
    ((c_w - q_others).max(0.0) * c.g / p_g).max(0.0)
}

/// One interval of the paper's rate control over a host's channels, `c_w` the
/// host's spare capacity C_W (bit/s), with `gains`.
pub fn paper_step(ch: &mut [RcChannel], c_w: f64, gains: &Gains) {
    let frozen: Vec<bool> = ch.iter_mut().map(|c| enter(c, gains)).collect();
    let in_q = |c: &RcChannel| c.active && c.caution;
    let in_p = |c: &RcChannel| c.active && !c.caution;
    let sum_q_w: f64 = ch.iter().filter(|c| in_q(c)).map(|c| c.w).sum();
    let sum_p_g: f64 = ch.iter().filter(|c| in_p(c)).map(|c| c.g).sum();
    let before: Vec<RcChannel> = ch.to_vec();
    for i in 0..ch.len() {
        if in_q(&ch[i]) && !frozen[i] && ch[i].heard {
            let rp = r_p(&before, i, c_w, sum_q_w, sum_p_g);
            caution_step(&mut ch[i], rp, gains);
        }
    }
    let c_p = (c_w - ch.iter().filter(|c| in_q(c)).map(|c| c.w).sum::<f64>()).max(0.0);
    let sum_p_g: f64 = ch.iter().filter(|c| in_p(c)).map(|c| c.g).sum();
    for c in ch.iter_mut() {
        if in_p(c) && sum_p_g > 0.0 {
            c.w = c_p * c.g / sum_p_g;
        } else if !(c.active || gains.keep_idle && c.caution) {
            // idle: offered R_P for when it returns (an idle caution channel keeps
            // its R_W with `keep_idle`)
            c.caution = false;
            c.w = if sum_p_g + c.g > 0.0 {
                c_p * c.g / (sum_p_g + c.g)
            } else {
                0.0
            };
        }
    }
}

/// Channel `c`'s feedback moves it between the sets before the step: trapped (to
/// Q at the trap rate) or out of the trap (`untrap`), both frozen for this step
/// (returns true), or into Q on its first marks. With `ecn_gain`, it also averages β.
fn enter(c: &mut RcChannel, gains: &Gains) -> bool {
    if !c.active || !c.heard {
        return false;
    }
    if gains.ecn_gain > 0.0 && !c.stale {
        c.beta_avg += gains.ecn_gain * (c.beta - c.beta_avg);
    }
    if c.trapped {
        if c.w_trap == 0.0 {
            c.w_trap = c.w;
        }
        (c.w, c.caution) = (gains.trap, true);
        return true;
    }
    if gains.untrap && c.w_trap > 0.0 && c.delivered {
        // red delivered again: it leaves the trapped state at half the R_W it was
        // trapped at, Eq. 5 with β = 1 (not being delivered is the strongest mark)
        (c.w, c.w_cut, c.w_trap, c.caution) = (c.w_trap / 2.0, c.w_trap, 0.0, true);
        return true;
    }
    if !c.caution && c.beta > 0.0 {
        c.caution = true;
        // a new congestion episode starts from the cautious end, as Linux's DCTCP
        // starts its α at 1
        c.beta_avg = 1.0;
    }
    false
}

/// One heard step of a caution channel `c` whose R_P is `rp`: Eq. 5 on marks
/// (unless `hold` or `cwr` says they are the last cut's), else Eq. 6 (or, near its
/// last cut, the `probe`), back to P once at R_P.
fn caution_step(c: &mut RcChannel, rp: f64, gains: &Gains) {
    if c.beta > 0.0 && (gains.hold && c.cut || gains.cwr && c.stale) {
        // marks made by the queue the last cut is draining
        c.cut = false;
    } else if c.beta > 0.0 {
        c.w_cut = c.w;
        let beta = if gains.ecn_gain > 0.0 {
            c.beta_avg
        } else {
            c.beta
        };
        c.w *= 1.0 - beta / 2.0;
        c.cut = true;
    } else {
        c.cut = false;
        let grown = match gains.probe {
            Some((near, step)) if c.w_cut > 0.0 && c.w >= near * c.w_cut => c.w + step * c.g,
            // Eq. 6, but not past `near` of the last cut's R_W in one step
            Some((near, _)) if c.w_cut > 0.0 => ((1.0 + gains.alpha) * c.w).min(near * c.w_cut),
            _ => (1.0 + gains.alpha) * c.w,
        };
        c.w = rp.min(grown);
        if c.w >= rp {
            c.caution = false;
        }
    }
}

/// The module's R_W (Mb/s) after a feedback of `f` % marked red bytes, for a
/// channel with R_G = `g` Mb/s and a NIC of `ceiling` Mb/s.
pub fn code_step(g: u64, w: u64, f: u64, ceiling: u64) -> u64 {
    if f != 0 {
        w * 200u64.saturating_sub(f) / 200
    } else if g + w < ceiling {
        w + ((ceiling - g - w) * 500 / 1000).max(10)
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: f64 = 1e6;
    /// The paper read literally: α = 0.5, 10 Kb/s when trapped, every mark applied.
    const LITERAL: Gains = Gains {
        alpha: 0.5,
        trap: 1e4,
        hold: false,
        cwr: false,
        probe: None,
        ecn_gain: 0.0,
        untrap: false,
        keep_idle: false,
    };

    fn ch(g: f64, w: f64) -> RcChannel {
        RcChannel {
            g: g * M,
            w: w * M,
            active: true,
            heard: true,
            ..Default::default()
        }
    }

    #[test]
    fn congestion_free_channels_share_the_spare_by_guarantee() {
        // C = 1 Gb/s, guarantees 100 + 300: C_W = 600, shared 1:3 (Eq. 4)
        let mut c = [ch(100.0, 0.0), ch(300.0, 0.0)];
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert_eq!((c[0].w / M, c[1].w / M), (150.0, 450.0));
    }

    #[test]
    fn a_marked_channel_is_cut_and_the_others_take_what_it_leaves() {
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[0].beta = 0.5;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert!(c[0].caution && !c[1].caution);
        assert_eq!(c[0].w / M, 150.0 * 0.75); // Eq. 5
        assert_eq!(c[1].w / M, 600.0 - 112.5); // C_P = C_W − R_W of Q (Eqs. 3-4)
    }

    #[test]
    fn a_caution_channel_grows_by_alpha_up_to_r_p_then_returns_to_p() {
        let mut c = [ch(100.0, 40.0), ch(300.0, 560.0)];
        c[0].caution = true;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        // R_P = 600 · 100 / 400 = 150; (1 + α) · 40 = 60
        assert_eq!(c[0].w / M, 60.0);
        assert!(c[0].caution);
        assert_eq!(c[1].w / M, 540.0);
        for _ in 0..3 {
            paper_step(&mut c, 600.0 * M, &LITERAL);
        }
        // 60 → 90 → 135 → 150 = R_P: back in P, on Eq. 4
        assert!(!c[0].caution);
        assert_eq!((c[0].w / M, c[1].w / M), (150.0, 450.0));
    }

    #[test]
    fn a_channel_not_heard_from_keeps_its_set_and_rate() {
        let mut c = [ch(100.0, 40.0), ch(300.0, 450.0)];
        c[0].caution = true;
        c[0].heard = false;
        c[0].beta = 0.5; // stale: not applied again
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert!(c[0].caution);
        assert_eq!(c[0].w / M, 40.0);
        assert_eq!(c[1].w / M, 560.0); // P takes what Q leaves (Eqs. 3-4)
                                       // a P channel not heard from stays in P despite a stale β
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[1].heard = false;
        c[1].beta = 1.0;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert!(!c[1].caution);
        assert_eq!((c[0].w / M, c[1].w / M), (150.0, 450.0));
    }

    #[test]
    fn with_hold_the_marks_right_after_a_cut_are_not_applied_again() {
        let hold = Gains {
            hold: true,
            ..LITERAL
        };
        let mut c = [ch(100.0, 400.0)];
        c[0].beta = 1.0;
        paper_step(&mut c, 600.0 * M, &hold);
        assert_eq!(c[0].w / M, 200.0); // Eq. 5
        paper_step(&mut c, 600.0 * M, &hold);
        assert_eq!(c[0].w / M, 200.0); // held: the queue is still draining
        paper_step(&mut c, 600.0 * M, &hold);
        assert_eq!(c[0].w / M, 100.0); // marks again: cut again
        c[0].beta = 0.0;
        paper_step(&mut c, 600.0 * M, &hold);
        assert_eq!(c[0].w / M, 150.0); // Eq. 6
                                       // read literally, every marked interval cuts
        let mut c = [ch(100.0, 400.0)];
        c[0].beta = 1.0;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert_eq!(c[0].w / M, 100.0);
    }

    #[test]
    fn a_trapped_channel_drops_to_the_trap_rate() {
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[1].trapped = true;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert!(c[1].caution);
        assert_eq!(c[1].w, 1e4);
        assert_eq!(c[0].w, 600.0 * M - 1e4);
    }

    #[test]
    fn an_inactive_channel_leaves_its_set_and_is_offered_its_share() {
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[0].active = false;
        c[0].caution = true;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert_eq!(c[1].w / M, 600.0);
        assert!(!c[0].caution);
        assert_eq!(c[0].w / M, 600.0 * 100.0 / 400.0);
    }

    #[test]
    fn the_module_cuts_by_f_over_200_or_closes_half_the_gap() {
        assert_eq!(code_step(100, 400, 20, 1000), 360); // ⌊400 · 180 / 200⌋
        assert_eq!(code_step(100, 400, 0, 1000), 650); // + ⌊500 / 2⌋
        assert_eq!(code_step(100, 885, 0, 1000), 895); // + max(⌊15 / 2⌋, 10)
        assert_eq!(code_step(100, 900, 0, 1000), 900); // at the NIC: unchanged
        assert_eq!(code_step(100, 1, 100, 1000), 0); // truncates to 0
        assert_eq!(code_step(100, 0, 0, 1000), 450);
    }

    #[test]
    fn with_cwr_marks_on_red_sent_before_the_cut_are_not_applied() {
        let cwr = Gains {
            cwr: true,
            ..LITERAL
        };
        let mut c = [ch(100.0, 400.0)];
        c[0].beta = 1.0;
        paper_step(&mut c, 600.0 * M, &cwr);
        assert_eq!(c[0].w / M, 200.0); // Eq. 5
                                       // the next feedback still counts red sent before the cut: held, neither cut
                                       // nor grown, however many intervals it takes
        c[0].stale = true;
        for _ in 0..3 {
            paper_step(&mut c, 600.0 * M, &cwr);
            assert_eq!(c[0].w / M, 200.0);
        }
        // marks on red sent after it: cut again
        c[0].stale = false;
        paper_step(&mut c, 600.0 * M, &cwr);
        assert_eq!(c[0].w / M, 100.0);
        // no marks at all, stale or not: Eq. 6
        c[0].beta = 0.0;
        c[0].stale = true;
        paper_step(&mut c, 600.0 * M, &cwr);
        assert_eq!(c[0].w / M, 150.0);
    }

    #[test]
    fn with_probe_growth_slows_near_the_rate_last_cut_and_scales_with_r_g() {
        let probe = Gains {
            probe: Some((0.9, 0.02)),
            ..LITERAL
        };
        let mut c = [ch(100.0, 400.0)];
        c[0].beta = 1.0;
        paper_step(&mut c, 600.0 * M, &probe);
        assert_eq!((c[0].w / M, c[0].w_cut / M), (200.0, 400.0));
        c[0].beta = 0.0;
        // far below 0.9 × 400: Eq. 6 (α = 0.5 here), 200 → 300
        paper_step(&mut c, 600.0 * M, &probe);
        assert_eq!(c[0].w / M, 300.0);
        // 300 → 450 would pass 0.9 × 400 = 360: Eq. 6 stops there
        paper_step(&mut c, 600.0 * M, &probe);
        assert_eq!(c[0].w / M, 360.0);
        // at or above 360: + 0.02 · R_G = 2 Mb/s an interval
        paper_step(&mut c, 600.0 * M, &probe);
        assert!((c[0].w / M - 362.0).abs() < 1e-9);
    }

    #[test]
    fn with_ecn_gain_the_cut_follows_beta_averaged_from_one() {
        let dctcp = Gains {
            ecn_gain: 0.5,
            ..LITERAL
        };
        let mut c = [ch(100.0, 400.0)];
        c[0].beta = 0.2;
        // first marks: into Q with α = 1, a new episode's first cut is by half
        paper_step(&mut c, 600.0 * M, &dctcp);
        assert_eq!((c[0].beta_avg, c[0].w / M), (1.0, 200.0));
        // α = 1 + 0.5 (0.2 − 1) = 0.6: a cut of 30 %, not the 10 % β gives
        paper_step(&mut c, 600.0 * M, &dctcp);
        assert!((c[0].beta_avg - 0.6).abs() < 1e-12);
        assert!((c[0].w / M - 140.0).abs() < 1e-9);
        // a stale feedback leaves the average alone
        c[0].stale = true;
        c[0].beta = 0.0;
        paper_step(&mut c, 600.0 * M, &dctcp);
        assert!((c[0].beta_avg - 0.6).abs() < 1e-12);
    }

    #[test]
    fn with_untrap_a_trapped_channel_returns_at_half_its_rate_once_red_arrives() {
        let untrap = Gains {
            untrap: true,
            ..LITERAL
        };
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[1].trapped = true;
        paper_step(&mut c, 600.0 * M, &untrap);
        assert_eq!((c[1].w, c[1].w_trap / M), (1e4, 450.0));
        // still nothing delivered: stays at the trap rate, grows by Eq. 6 only
        c[1].trapped = false;
        paper_step(&mut c, 600.0 * M, &untrap);
        assert_eq!(c[1].w, 1.5e4);
        // red arrives again: out of the trap at 450 / 2, in Q
        c[1].delivered = true;
        paper_step(&mut c, 600.0 * M, &untrap);
        assert!(c[1].caution);
        assert_eq!(
            (c[1].w / M, c[1].w_cut / M, c[1].w_trap),
            (225.0, 450.0, 0.0)
        );
        // without untrap it keeps climbing from the trap rate
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[1].trapped = true;
        paper_step(&mut c, 600.0 * M, &LITERAL);
        (c[1].trapped, c[1].delivered) = (false, true);
        paper_step(&mut c, 600.0 * M, &LITERAL);
        assert_eq!(c[1].w, 1.5e4);
    }

    #[test]
    fn with_keep_idle_an_idle_caution_channel_keeps_its_rate_and_set() {
        let keep = Gains {
            keep_idle: true,
            ..LITERAL
        };
        let mut c = [ch(100.0, 40.0), ch(300.0, 450.0)];
        (c[0].active, c[0].caution) = (false, true);
        paper_step(&mut c, 600.0 * M, &keep);
        assert!(c[0].caution);
        assert_eq!((c[0].w / M, c[1].w / M), (40.0, 600.0));
        // an idle channel of P is still offered its share
        let mut c = [ch(100.0, 150.0), ch(300.0, 450.0)];
        c[0].active = false;
        paper_step(&mut c, 600.0 * M, &keep);
        assert_eq!(c[0].w / M, 600.0 * 100.0 / 400.0);
    }
}
