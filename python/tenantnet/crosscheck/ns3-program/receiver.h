// tenantnet's ns-3 cross-check: the receivers, whose ACKs follow Linux's rules where
// the scenario's transport does (ns-3 3.44's public API).
//
// ns-3's TcpSocketBase delays every in-order ACK (`DelAckCount` segments or
// `DelAckTimeout`), where Linux and tenantnet's `linux` profile acknowledge at once
// the first segments of a connection (quick-ACK mode, `tcp_incr_quickack`,
// `TCP_MAX_QUICKACKS` = 16; tenantnet's `transport.quick_acks`) and the segment that
// ends the application's data (tenantnet's `transport.ack_push`: Linux ACKs a PSH
// segment when the application reads it). Without them an ns-3 flow whose last
// segment is odd waits for the delayed-ACK timer, or for the sender's retransmission
// timeout when that is shorter: a leaf-spine replay under the `linux` profile
// (10 ms minimum RTO) put ns-3's median flow at 10.1 ms against tenantnet's 0.33.
//
// `LinuxAckSocket` is ns-3's socket with those two rules: before ns-3 handles a data
// segment that is one of the first `quick` or that ends its flow, it counts the
// segment as the one that completes a delayed ACK, so ns-3 acknowledges it at once
// (`TcpSocketBase::ReceivedData`). A flow's end is known from its sender's address and
// port, which the sender records when it connects (`NoteFlowEnd`).

#pragma once

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <map>
#include <utility>

namespace
{

using namespace ns3;

/// The receivers' ACK rules (from the command line).
struct AckRules
{
    /// Segments of each connection acknowledged at once (0: none).
    uint32_t quick = 0;
    /// Acknowledge at once the segment that ends a flow's data.
    bool push = false;
};

AckRules g_ackRules;

/// Each flow's last sequence number plus one, by its sender's address and port.
std::map<std::pair<uint32_t, uint16_t>, uint32_t> g_flowEnd;

/// Records that the connection from `local` carries `size` bytes (data from sequence 1).
void
NoteFlowEnd(const Address& local, uint64_t size)
{
    auto a = InetSocketAddress::ConvertFrom(local);
    g_flowEnd[{a.GetIpv4().Get(), a.GetPort()}] = static_cast<uint32_t>(size + 1);
}

/// ns-3's TCP socket with Linux's quick ACKs and PSH ACKs (see the file's comment).
class LinuxAckSocket : public TcpSocketBase
{
  public:
    LinuxAckSocket()
        : m_quick(g_ackRules.quick)
    {
    }

    LinuxAckSocket(const LinuxAckSocket&) = default;

  protected:
    Ptr<TcpSocketBase> Fork() override
    {
        return CopyObject<LinuxAckSocket>(this);
    }

    void ReceivedData(Ptr<Packet> packet, const TcpHeader& header) override
    {
        bool quick = m_quick > 0;
        m_quick -= quick ? 1 : 0;
        if ((quick || EndsFlow(packet, header)) && m_delAckMaxCount > 1)
        {
            // one more segment completes the delayed ACK: ns-3 sends it now
            m_delAckCount = m_delAckMaxCount - 1;
        }
        TcpSocketBase::ReceivedData(packet, header);
    }

  private:
    /// Whether the segment holds the flow's last byte.
    bool EndsFlow(Ptr<Packet> packet, const TcpHeader& header) const
    {
        if (!g_ackRules.push || m_endPoint == nullptr)
        {
            return false;
        }
        auto it = g_flowEnd.find({m_endPoint->GetPeerAddress().Get(), m_endPoint->GetPeerPort()});
        return it != g_flowEnd.end() &&
               header.GetSequenceNumber().GetValue() + packet->GetSize() == it->second;
    }

    uint32_t m_quick;
};

/// Drains whatever a connection received.
void
Drain(Ptr<Socket> socket)
{
    while (socket->Recv())
    {
    }
}

/// A connection was accepted: its data is read as it arrives.
void
Accepted(Ptr<Socket> socket, const Address&)
{
    socket->SetRecvCallback(MakeCallback(&Drain));
}

/// A listening `LinuxAckSocket` on `port` of every node of `hosts`, with the congestion
/// control, recovery and RTT estimator ns-3's TCP is configured with.
void
InstallReceivers(NodeContainer hosts, uint16_t port)
{
    for (uint32_t i = 0; i < hosts.GetN(); i++)
    {
        Ptr<TcpL4Protocol> tcp = hosts.Get(i)->GetObject<TcpL4Protocol>();
        TypeIdValue cc;
        TypeIdValue recovery;
        TypeIdValue rtt;
        tcp->GetAttribute("SocketType", cc);
        tcp->GetAttribute("RecoveryType", recovery);
        tcp->GetAttribute("RttEstimatorType", rtt);
        ObjectFactory make;
        Ptr<LinuxAckSocket> s = CreateObject<LinuxAckSocket>();
        s->SetNode(hosts.Get(i));
        s->SetTcp(tcp);
        make.SetTypeId(rtt.Get());
        s->SetRtt(make.Create<RttEstimator>());
        make.SetTypeId(cc.Get());
        s->SetCongestionControlAlgorithm(make.Create<TcpCongestionOps>());
        make.SetTypeId(recovery.Get());
        s->SetRecoveryAlgorithm(make.Create<TcpRecoveryOps>());
        tcp->AddSocket(s);
        s->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        s->Listen();
        s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&Accepted));
    }
}

} // namespace
