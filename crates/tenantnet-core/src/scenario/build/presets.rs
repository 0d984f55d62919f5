//! What a host policy needs of the switches, set up for the user: the `trinity`
//! preset gives every switch port two strict-priority queues, green (DSCP 1) and
//! feedback (DSCP 2) in the high one and red (DSCP 0) in the low one, per-queue ECN
//! at K = 30 KB (Trinity §IV-B, T:L867-872, T:L938-940), and host NICs that do not
//! mark (the testbed's servers). The `elasticswitch` preset is the same testbed's
//! marking and buffer on the ports' queues as the scenario has them (its limiters
//! react to ECN; Trinity §IV-B ran both on the same switches). A key the scenario
//! writes itself is kept; one that cannot work with the policy is an error naming
//! both.

use super::Ctx;
use crate::scenario::parse::ScenarioError;
use crate::scenario::spec::{DscpMapSpec, NetworkSpec};
use crate::scenario::tenants::VswitchSpec;
use crate::switch::buffer::BufferPolicyKind;
use crate::switch::ecn::EcnScope;
use crate::switch::sched::SchedulerKind;
use crate::units::{ByteSize, Size};
use crate::vswitch::PolicyKind;

/// The key that makes a host run `kind` (`vswitch.policy` or `vswitch.hosts.<h>`).
fn runs(vs: &VswitchSpec, kind: PolicyKind) -> Option<String> {
    if vs.policy == kind {
        return Some("vswitch.policy".into());
    }
    vs.hosts
        .iter()
        .find(|(_, k)| **k == kind)
        .map(|(h, _)| format!("vswitch.hosts.{h}"))
}

/// `[network]` with the presets of the scenario's host policies applied.
pub fn network(
    ctx: &Ctx,
    nw: &NetworkSpec,
    vs: &VswitchSpec,
) -> Result<NetworkSpec, ScenarioError> {
    let mut nw = nw.clone();
    if let Some(by) = runs(vs, PolicyKind::Trinity) {
        trinity(ctx, &mut nw, &by)?;
    }
    if runs(vs, PolicyKind::ElasticSwitch).is_some() {
        marking(ctx, &mut nw);
    }
    Ok(nw)
}

fn trinity(ctx: &Ctx, nw: &mut NetworkSpec, by: &str) -> Result<(), ScenarioError> {
    let set = |k: &str| !ctx.written(&format!("network.{k}"));
    if ctx.written("network.queues") && nw.queues < 2 {
        return Err(ctx.err(
            "network.queues",
            format!("{by} = \"trinity\" needs switch ports with 2 strict-priority queues (green above red); expected network.queues = 2, or leave it to the trinity preset"),
        ));
    }
    if set("queues") {
        nw.queues = 2;
    }
    if set("scheduler") {
        nw.scheduler = SchedulerKind::Strict;
    }
    if set("dscp_map") {
        nw.dscp_map = DscpMapSpec::Pairs(vec![(0, 1)]);
    }
    marking(ctx, nw);
    Ok(())
}

/// ECN at K = 30 KB in each queue, hosts that do not mark, and the shared buffer.
fn marking(ctx: &Ctx, nw: &mut NetworkSpec) {
    let set = |k: &str| !ctx.written(&format!("network.{k}"));
    if set("ecn_threshold") {
        nw.ecn_threshold = Some(Size(ByteSize::Bytes(30_000)));
    }
    if set("ecn_scope") {
        nw.ecn_scope = EcnScope::Queue;
    }
    if set("host_ecn") {
        nw.host_ecn = false;
    }
    // the testbed's switches share one buffer among their ports (T:L868-869), 4 MB
    // on a Pronto-3295: without it red packets can fill a port's buffer and drop
    // green ones
    if set("buffer_policy") && set("pool") {
        nw.buffer_policy = BufferPolicyKind::DynamicThreshold;
        nw.pool = Some(Size(ByteSize::Bytes(4_000_000)));
    }
}
