// tenantnet's ns-3 cross-check: four defects of ns-3 3.44's SACK loss recovery, fixed
// in ns-3's development tree after the 3.44 release, applied to the wheel's libraries.
//
// * #1190 (ns-3-dev 380573ef1): `TcpTxBuffer::Update` never cleared the retransmit
//   accounting of a retransmitted segment that a SACK then covered, so
//   `BytesInFlight()` (RFC 6675's pipe) kept counting it until the cumulative ACK
//   passed it: every repaired hole above a lost one inflated the pipe for the rest of
//   the recovery and held the sender back.
// * #1350 (05c9099bb): `TcpPrrRecovery::DoRecovery` added one segment to the ACK's
//   DeliveredData on every duplicate ACK even with SACK, where DeliveredData already
//   counts the newly SACKed bytes (RFC 6937 §3, RFC 9937 §6.2: the segment estimate is
//   for connections without SACK): `prr_delivered` ran ahead and PRR sent more.
// * #1351 (6523c1aad): `TcpPrrRecovery::EnterRecovery` took RecoverFS from the pipe
//   instead of the FlightSize (SND.NXT − SND.UNA; RFC 6937 §3, RFC 9937 §6.1), so the
//   proportional part sent faster than ssthresh/RecoverFS of what was delivered. (Its
//   later refinement, f2ccf2af2, subtracts bytes SACKed before recovery; tenantnet's
//   PRR starts from the FlightSize as RFC 6937 does, and so does this fix.)
// * #1282 (25f76649d): `DoRecovery` computed `prr_delivered · ssthresh` and
//   `prr_delivered − prr_out` in 32-bit unsigned arithmetic, which wrap (a product past
//   4.3e9, e.g. 70 KB of ssthresh times 62 KB delivered; an `out` ahead of `delivered`).
//
// #1190 is in a function no subclass can replace: the program defines
// `TcpTxBuffer::Update`, and the executable's definition takes the place of the shared
// library's, which calls it through its procedure linkage table. It calls ns-3's own
// (`dlsym(RTLD_NEXT)`) and then applies the fix's effect; with `--upstream_fixes=0`
// it only calls ns-3's (a test compares the program built with
// TENANTNET_NS3_AS_RELEASED, which leaves ns-3's alone, output for output). The three
// PRR fixes are in `FixedPrrRecovery`, a `TcpRecoveryOps` of the program's own (ns-3's
// public API), in place of ns-3's `TcpPrrRecovery` when the fixes are on.
// Loss detection of retransmissions by SACKs of later data (#1349, 5ada3ae14) is not
// applied: it adds a mechanism that RFC 6675, and tenantnet's `sack`, do not have.

#pragma once

#include "ns3/internet-module.h"

#include <algorithm>
#include <cmath>

namespace
{
/// Whether the four fixes apply (`--upstream_fixes`, default on; a program built with
/// TENANTNET_NS3_AS_RELEASED has 3.44's functions and ignores it).
bool g_upstreamFixes = true;
/// Whether the connections use SACK (`--sack`): #1350 applies to SACK only.
bool g_sackOn = true;
} // namespace

#ifndef TENANTNET_NS3_AS_RELEASED

#include <dlfcn.h>

#include <vector>

namespace
{
/// `ns3::TcpTxBuffer::Update(SackList const&, Callback<void, TcpTxItem*> const&)` as
/// the Itanium C++ ABI names it, to find ns-3's own definition behind this one.
const char* kUpdateSymbol =
    "_ZN3ns311TcpTxBuffer6UpdateERKNSt7__cxx114listISt4pairINS_14SequenceNumberIjiEES5_"
    "ESaIS6_EEERKNS_8CallbackIvJPNS_9TcpTxItemEEEE";
} // namespace

namespace ns3
{

/// The scoreboard update: ns-3 3.44's own (the library's, found past this definition),
/// then #1190: a retransmitted segment the update SACKed is no longer counted as a
/// retransmission in flight. (Nothing between the two reads the retransmission
/// flags: the update's lost-marking does not, nor its callback, the rate sampler.)
uint32_t
TcpTxBuffer::Update(const TcpOptionSack::SackList& list, const Callback<void, TcpTxItem*>& sackedCb)
{
    using Released = uint32_t (*)(TcpTxBuffer*,
                                  const TcpOptionSack::SackList&,
                                  const Callback<void, TcpTxItem*>&);
    static auto released = reinterpret_cast<Released>(dlsym(RTLD_NEXT, kUpdateSymbol));
    NS_ABORT_MSG_IF(released == nullptr, "upstream.h: ns-3's TcpTxBuffer::Update not found");
    if (!g_upstreamFixes)
    {
        return released(this, list, sackedCb);
    }
    std::vector<TcpTxItem*> retransmitted;
    for (TcpTxItem* item : m_sentList)
    {
        if (item->m_retrans && !item->m_sacked)
        {
            retransmitted.push_back(item);
        }
    }
    uint32_t bytesSacked = released(this, list, sackedCb);
    for (TcpTxItem* item : retransmitted)
    {
        if (item->m_sacked)
        {
            item->m_retrans = false;
            m_retrans -= item->m_packet->GetSize();
        }
    }
    return bytesSacked;
}

} // namespace ns3

namespace
{

using namespace ns3;

/// Proportional Rate Reduction (RFC 6937 §3) with ns-3's choices (PRR-SSRB's extra
/// segment when retransmitted data is cumulatively acknowledged, a fast retransmit
/// at least at the start) and without 3.44's faults #1350, #1351 and #1282; the
/// program's recovery with SACK or `--recovery=prr` when the fixes are on (ns-3's own
/// `TcpPrrRecovery` when they are off).
class FixedPrrRecovery : public TcpClassicRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("tenantnet::FixedPrrRecovery")
                                .SetParent<TcpClassicRecovery>()
                                .AddConstructor<FixedPrrRecovery>();
        return tid;
    }

    std::string GetName() const override
    {
        return "PrrRecovery";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb,
                       uint32_t /* dupAckCount */,
                       uint32_t unAckDataCount,
                       uint32_t deliveredBytes) override
    {
        m_prrOut = 0;
        m_prrDelivered = 0;
        m_recoverFs = unAckDataCount; // #1351: the FlightSize, where 3.44 took the pipe
        DoRecovery(tcb, deliveredBytes, true);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override
    {
        // #1350: a duplicate ACK stands for a delivered segment without SACK only
        if (isDupAck && !g_sackOn && m_prrDelivered < m_recoverFs)
        {
            deliveredBytes += tcb->m_segmentSize;
        }
        if (deliveredBytes == 0)
        {
            return;
        }
        m_prrDelivered += deliveredBytes;
        // #1282: 64-bit arithmetic throughout
        int64_t sendCount;
        int64_t pipe = tcb->m_bytesInFlight.Get();
        int64_t ssthresh = tcb->m_ssThresh.Get();
        if (pipe > ssthresh)
        {
            // the proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out
            uint64_t dividend = m_prrDelivered * uint64_t(ssthresh);
            uint64_t quotient = dividend / m_recoverFs + (dividend % m_recoverFs != 0);
            sendCount = int64_t(quotient) - int64_t(m_prrOut);
        }
        else
        {
            // ns-3's bound: PRR-CRB, PRR-SSRB's extra segment on its safe ACK
            int64_t limit = std::max(int64_t(m_prrDelivered) - int64_t(m_prrOut),
                                     int64_t{deliveredBytes});
            if (tcb->m_isRetransDataAcked)
            {
                limit += tcb->m_segmentSize;
            }
            sendCount = std::min(limit, ssthresh - pipe);
        }
        // a fast retransmit at the start of recovery
        sendCount = std::max<int64_t>(sendCount, m_prrOut > 0 ? 0 : tcb->m_segmentSize);
        tcb->m_cWnd = uint32_t(pipe + sendCount);
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void ExitRecovery(Ptr<TcpSocketState> tcb) override
    {
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void UpdateBytesSent(uint32_t bytesSent) override
    {
        m_prrOut += bytesSent;
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<FixedPrrRecovery>(this);
    }

  private:
    uint64_t m_prrDelivered{0}; ///< bytes delivered during recovery
    uint64_t m_prrOut{0};       ///< bytes sent during recovery
    uint64_t m_recoverFs{1};    ///< RecoverFS: the FlightSize when recovery began
};

} // namespace

#endif

namespace
{
/// The PRR recovery the program runs: with the fixes (when built with them and
/// `on`), or ns-3's own.
ns3::TypeId
PrrRecoveryType(bool on)
{
#ifndef TENANTNET_NS3_AS_RELEASED
    if (on)
    {
        return FixedPrrRecovery::GetTypeId();
    }
#endif
    return ns3::TcpPrrRecovery::GetTypeId();
}
} // namespace
