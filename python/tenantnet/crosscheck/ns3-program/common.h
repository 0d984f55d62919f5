// tenantnet's ns-3 cross-check: what both of its topologies share (ns-3 3.44's
// public API; upstream.h also stands in for one ns-3 function). The program
// (crosscheck.cc) builds a dumbbell (dumbbell.h) or a leaf-spine (leafspine.h); this
// file holds the senders, the queues, the TCP settings and the report.
//
// Every switch port is one FIFO of `buffer` bytes, every host NIC one of
// `host_buffer` (a FifoQueueDisc, or RED marking above `ecn_k` bytes on the
// instantaneous queue; host NICs mark only with `host_ecn`) over a one-packet device
// queue: ns-3's default fq_codel root queue disc is replaced before addresses are
// assigned, so that it is never installed.
//
// A flow's completion time runs from the moment its connection is established
// (tenantnet has no handshake) to the ACK of its last byte at the sender, as
// tenantnet counts it. The SYN times out after `min_rto`.
//
// Output (stdout): one CSV line per flow: index, fct_s, timeouts (entries into
// CA_LOSS), retransmissions; then `drops,<n>` summed over every queue disc. With
// `--verbose`, stderr has every flow's congestion-state and window changes and the
// drops by queue, reason, ECN codepoint and kind (data or pure ACK), and every queue
// disc's backlog integrated over the run (byte-seconds).

#pragma once

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "receiver.h"
#include "upstream.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

struct FlowStat
{
    double start = -1;
    double end = -1;
    uint32_t timeouts = 0;
    uint32_t retx = 0;
    uint64_t size = 0;
};

std::vector<FlowStat> g_flows;
bool g_verbose = false;
std::map<std::string, uint64_t> g_dropKinds;

/// Each queue disc's backlog over time (verbose runs): bytes at the last change, its
/// time, and the integral of bytes over seconds until then, in all and by millisecond
/// (printed as `queue N backlog X B s` and `queue N ms K X B s`, the latter where X > 0).
struct Backlog
{
    double bytes = 0;
    double since = 0;
    double integral = 0;
    /// The integral by millisecond of the run.
    std::vector<double> bins;
};

/// Adds `b`'s bytes from its last change to `t` seconds to its integrals.
void
Accumulate(Backlog& b, double t)
{
    b.integral += b.bytes * (t - b.since);
    for (double from = b.since; from < t;)
    {
        auto k = static_cast<size_t>(from * 1e3);
        if ((k + 1) * 1e-3 <= from)
        {
            k++; // `from` sits on a bin's end that the product rounded below
        }
        double to = std::min(t, (k + 1) * 1e-3);
        if (b.bins.size() <= k)
        {
            b.bins.resize(k + 1);
        }
        b.bins[k] += b.bytes * (to - from);
        from = to;
    }
}

std::vector<Backlog> g_backlog;

/// Queue disc `n`'s backlog changed to `now` bytes.
void
OnBacklog(uint32_t n, uint32_t, uint32_t now)
{
    Backlog& b = g_backlog[n];
    double t = Simulator::Now().GetSeconds();
    Accumulate(b, t);
    b.bytes = now;
    b.since = t;
}

/// A drop at queue `where` (verbose runs): counted by reason, codepoint and kind.
void
OnDrop(std::string where, Ptr<const QueueDiscItem> item, const char* reason)
{
    auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    std::string what = "?";
    if (ip)
    {
        auto ecn = ip->GetHeader().GetEcn();
        what = ecn == Ipv4Header::ECN_NotECT ? "not-ECT" : (ecn == Ipv4Header::ECN_CE ? "CE" : "ECT");
        what += ip->GetPacket()->GetSize() > 100 ? " data" : " ack";
    }
    g_dropKinds[where + ": " + reason + ", " + what]++;
}

/// One connection that sends its flow's bytes as fast as the socket takes them.
class Sender : public Application
{
  public:
    Sender(uint32_t index, Address peer)
        : m_index(index),
          m_peer(peer)
    {
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        auto tcp = DynamicCast<TcpSocketBase>(m_socket);
        tcp->TraceConnectWithoutContext("CongState", MakeCallback(&Sender::OnState, this));
        tcp->TraceConnectWithoutContext("Retransmission", MakeCallback(&Sender::OnRetx, this));
        tcp->TraceConnectWithoutContext("HighestRxAck", MakeCallback(&Sender::OnAck, this));
        if (g_verbose)
        {
            tcp->TraceConnectWithoutContext("CongestionWindow",
                                            MakeCallback(&Sender::OnCwnd, this));
        }
        m_socket->Bind();
        m_socket->SetConnectCallback(MakeCallback(&Sender::Connected, this),
                                     MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetSendCallback(MakeCallback(&Sender::Room, this));
        m_socket->Connect(m_peer);
        Address local;
        m_socket->GetSockName(local);
        NoteFlowEnd(local, g_flows[m_index].size);
    }

    void StopApplication() override
    {
    }

    void Connected(Ptr<Socket>)
    {
        g_flows[m_index].start = Simulator::Now().GetSeconds();
        Fill();
    }

    void Room(Ptr<Socket>, uint32_t)
    {
        if (g_flows[m_index].start >= 0)
        {
            Fill();
        }
    }

    void Fill()
    {
        uint64_t size = g_flows[m_index].size;
        while (m_sent < size)
        {
            uint32_t room = m_socket->GetTxAvailable();
            if (room == 0)
            {
                return;
            }
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(room, size - m_sent));
            int took = m_socket->Send(Create<Packet>(n));
            if (took <= 0)
            {
                return;
            }
            m_sent += took;
        }
    }

    void OnState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (g_verbose)
        {
            std::cerr << "flow " << m_index << " " << Simulator::Now().GetNanoSeconds()
                      << " ns " << TcpSocketState::TcpCongStateName[now] << "\n";
        }
        if (now == TcpSocketState::CA_LOSS)
        {
            g_flows[m_index].timeouts++;
        }
    }

    void OnCwnd(uint32_t, uint32_t now)
    {
        std::cerr << "flow " << m_index << " " << Simulator::Now().GetNanoSeconds()
                  << " ns cwnd " << now << "\n";
    }

    void OnRetx(Ptr<const Packet>,
                const TcpHeader&,
                const Address&,
                const Address&,
                Ptr<const TcpSocketBase>)
    {
        g_flows[m_index].retx++;
    }

    void OnAck(SequenceNumber32, SequenceNumber32 now)
    {
        // data starts at sequence 1 (the SYN takes 0)
        if (g_flows[m_index].end < 0 && now.GetValue() >= g_flows[m_index].size + 1)
        {
            g_flows[m_index].end = Simulator::Now().GetSeconds();
        }
    }

    uint32_t m_index;
    Address m_peer;
    Ptr<Socket> m_socket;
    uint64_t m_sent = 0;
};

/// A FIFO of `buffer` bytes on every device of `devs`, RED marking above `ecn_k`
/// bytes (instantaneous, mark instead of drop) when `ecn_k` > 0.
QueueDiscContainer
Fifo(NetDeviceContainer devs, uint64_t buffer, uint64_t ecn_k, DataRate rate, Time delay)
{
    TrafficControlHelper tch;
    auto size = QueueSize(QueueSizeUnit::BYTES, buffer);
    if (ecn_k > 0)
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(size),
                             "MinTh", DoubleValue(ecn_k),
                             "MaxTh", DoubleValue(ecn_k),
                             "QW", DoubleValue(1.0),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "Gentle", BooleanValue(false),
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", DataRateValue(rate),
                             "LinkDelay", TimeValue(delay));
    }
    else
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(size));
    }
    auto q = tch.Install(devs);
    static uint32_t n = 0;
    for (uint32_t i = 0; i < q.GetN(); i++, n++)
    {
        if (g_verbose)
        {
            std::string where = "queue " + std::to_string(n);
            q.Get(i)->TraceConnectWithoutContext("DropBeforeEnqueue",
                                                 MakeBoundCallback(&OnDrop, where));
            q.Get(i)->TraceConnectWithoutContext("DropAfterDequeue",
                                                 MakeBoundCallback(&OnDrop, where));
            g_backlog.resize(n + 1);
            q.Get(i)->TraceConnectWithoutContext("BytesInQueue",
                                                 MakeBoundCallback(&OnBacklog, n));
        }
    }
    return q;
}

/// The program's settings, from its command line.
struct Settings
{
    std::string topology = "dumbbell";
    uint32_t senders = 8;
    uint64_t size = 1000000;
    uint32_t leaves = 2;
    uint32_t spines = 2;
    uint32_t hostsPerLeaf = 4;
    std::string flows;
    uint32_t mss = 1448;
    uint32_t initCwnd = 10;
    uint64_t buffer = 100000;
    uint64_t hostBuffer = 100000;
    uint64_t ecnK = 0;
    bool hostEcn = true;
    std::string rate = "10Gbps";
    std::string delay = "10us";
    std::string bottleneckRate;
    std::string bottleneckDelay;
    std::string minRto = "10ms";
    std::string stop = "10s";
    std::string cc = "newreno";
    bool sack = false;
    std::string recovery;
    bool pairs = false;
    uint32_t delAck = 1;
    std::string delAckTimeout = "200ms";
    uint32_t quickAcks = 0;
    bool ackPush = false;
    bool upstreamFixes = true;
};

Settings
Parse(int argc, char* argv[])
{
    Settings s;
    CommandLine cmd(__FILE__);
    cmd.AddValue("topology", "dumbbell or leafspine", s.topology);
    cmd.AddValue("senders", "dumbbell: senders on the left switch", s.senders);
    cmd.AddValue("size", "dumbbell: bytes each flow sends", s.size);
    cmd.AddValue("leaves", "leafspine: leaf switches", s.leaves);
    cmd.AddValue("spines", "leafspine: spine switches", s.spines);
    cmd.AddValue("hosts_per_leaf", "leafspine: hosts under each leaf", s.hostsPerLeaf);
    cmd.AddValue("flows",
                 "leafspine: CSV file, a flow a line: src,dst,size,start_ns,data_spine,ack_spine",
                 s.flows);
    cmd.AddValue("rate", "every host link's rate", s.rate);
    cmd.AddValue("delay", "every link's one-way delay (dumbbell: host links)", s.delay);
    cmd.AddValue("bottleneck_rate",
                 "the switches' link rate (leafspine: leaf-spine links; default: rate)",
                 s.bottleneckRate);
    cmd.AddValue("bottleneck_delay", "dumbbell: the switches' link delay (default: delay)",
                 s.bottleneckDelay);
    cmd.AddValue("buffer", "bytes every switch port's FIFO holds", s.buffer);
    cmd.AddValue("host_buffer", "bytes every host NIC's FIFO holds", s.hostBuffer);
    cmd.AddValue("ecn_k", "RED marks above this many bytes (0: no ECN)", s.ecnK);
    cmd.AddValue("host_ecn", "host NICs mark like switch ports", s.hostEcn);
    cmd.AddValue("cc", "newreno, cubic or dctcp", s.cc);
    cmd.AddValue("sack", "SACK on", s.sack);
    cmd.AddValue("recovery", "prr or classic (default: prr with SACK, classic without)",
                 s.recovery);
    cmd.AddValue("mss", "segment payload bytes", s.mss);
    cmd.AddValue("init_cwnd", "initial window, segments", s.initCwnd);
    cmd.AddValue("min_rto", "minimum RTO (and the SYN's timeout)", s.minRto);
    cmd.AddValue("delack", "segments per ACK (1: no delayed ACKs)", s.delAck);
    cmd.AddValue("delack_timeout", "the delayed-ACK timer", s.delAckTimeout);
    cmd.AddValue("quick_acks", "segments of a connection acknowledged at once (Linux: 16)",
                 s.quickAcks);
    cmd.AddValue("ack_push", "acknowledge at once the segment that ends a flow", s.ackPush);
    cmd.AddValue("upstream_fixes",
                 "apply ns-3-dev's fixes #1190, #1282, #1350 and #1351 to SACK recovery "
                 "(upstream.h)",
                 s.upstreamFixes);
    cmd.AddValue("pairs", "dumbbell: each sender to its own receiver instead of incast",
                 s.pairs);
    cmd.AddValue("stop", "simulated time limit", s.stop);
    cmd.AddValue("verbose", "congestion states, windows and drops by kind on stderr",
                 g_verbose);
    cmd.Parse(argc, argv);
    if (s.bottleneckRate.empty())
    {
        s.bottleneckRate = s.rate;
    }
    if (s.bottleneckDelay.empty())
    {
        s.bottleneckDelay = s.delay;
    }
    return s;
}

/// A point-to-point link at `rate` and `delay` over a one-packet device queue, with
/// an MTU that holds a full segment with its timestamps (and room for more
/// options): at ns-3's default 1500 bytes a 1460-byte segment (1512 bytes with IP,
/// TCP and timestamps) would leave as two IP fragments, the second of 12 bytes.
PointToPointHelper
Link(const Settings& s, const std::string& rate, const std::string& delay)
{
    PointToPointHelper h;
    h.SetDeviceAttribute("Mtu", UintegerValue(s.mss + 20 + 60));
    h.SetDeviceAttribute("DataRate", StringValue(rate));
    h.SetChannelAttribute("Delay", StringValue(delay));
    h.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    return h;
}

/// TCP as the settings say: NewReno (ns-3's Linux Reno), CUBIC or DCTCP, SACK with PRR or
/// classic recovery, the SYN's timeout at the minimum RTO, 1 ns RTO granularity.
void
ConfigureTcp(const Settings& s)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(s.cc == "dctcp"   ? TcpDctcp::GetTypeId()
                                   : s.cc == "cubic" ? TcpCubic::GetTypeId()
                                                     : TcpLinuxReno::GetTypeId()));
    bool prr = s.recovery.empty() ? s.sack : s.recovery == "prr";
    g_upstreamFixes = s.upstreamFixes;
    g_sackOn = s.sack;
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(prr ? PrrRecoveryType(s.upstreamFixes)
                                       : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(s.sack));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(s.minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(NanoSeconds(1)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Time(s.minRto)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(s.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(s.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(s.delAck));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Time(s.delAckTimeout)));
    g_ackRules = AckRules{s.quickAcks, s.ackPush};
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    if (s.cc == "dctcp")
    {
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    }
}

/// The port every receiver listens on.
const uint16_t kPort = 5000;

/// A receiver on every node of `hosts`, accepting any number of connections, with
/// the ACK rules the settings give (`receiver.h`).
void
InstallSinks(NodeContainer hosts)
{
    InstallReceivers(hosts, kPort);
}

/// Prints the flows' table and the drops (see the file's comment).
void
Report(const QueueDiscContainer& qdiscs)
{
    uint64_t drops = 0;
    for (uint32_t k = 0; k < qdiscs.GetN(); k++)
    {
        drops += qdiscs.Get(k)->GetStats().nTotalDroppedPackets;
    }
    std::cout << std::setprecision(12);
    std::cout << "flow,fct_s,timeouts,retransmits\n";
    for (uint32_t i = 0; i < g_flows.size(); i++)
    {
        const auto& f = g_flows[i];
        std::cout << i << ",";
        if (f.end >= 0 && f.start >= 0)
        {
            std::cout << (f.end - f.start);
        }
        std::cout << "," << f.timeouts << "," << f.retx << "\n";
    }
    std::cout << "drops," << drops << "\n";
    for (const auto& [what, count] : g_dropKinds)
    {
        std::cerr << what << ": " << count << "\n";
    }
    double end = Simulator::Now().GetSeconds();
    for (uint32_t n = 0; n < g_backlog.size(); n++)
    {
        Backlog& b = g_backlog[n];
        Accumulate(b, end);
        std::cerr << "queue " << n << " backlog " << b.integral << " B s\n";
        for (size_t k = 0; k < b.bins.size(); k++)
        {
            if (b.bins[k] > 0)
            {
                std::cerr << "queue " << n << " ms " << k << " " << b.bins[k] << " B s\n";
            }
        }
    }
}

} // namespace
