// The cross-check's leaf-spine, as tenantnet's `leaf_spine`: `leaves` leaves of
// `hosts_per_leaf` hosts each (host links at `rate`), every leaf joined to each of
// `spines` spines at `bottleneck_rate`, every link with one-way `delay`. Host i is
// under leaf i / hosts_per_leaf, as tenantnet numbers them.
//
// Each flow takes the paths tenantnet's ECMP chose for its data and for its ACKs, so
// that both simulators load the same links; ns-3's global routing has no per-flow
// ECMP, so the routes are static and per flow. Flow i owns the block 10.0.0.0 +
// 4i/30: its receiver holds .1 (/32), its sender .2 (/30). ns-3 picks a connection's
// source address by the route to its peer (the address whose subnet holds the
// peer's), which is the sender's .2; each switch on the data path routes .1 toward
// the receiver, and each on the ACK path .2 toward the sender. A switch finds a
// flow's route in a hash table of its own (FlowRoutes): ns-3's static routing looks
// its routes up one by one, which cost a quarter of ns-3's time at 400 flows.
//
// The flows come from a CSV file (`flows`), a flow a line: src host, dst host,
// bytes, start (ns), data spine, ACK spine (-1 where both hosts share a leaf); at
// most 2^22 flows.

#pragma once

#include "common.h"

#include <fstream>
#include <unordered_map>

namespace
{

/// One flow of the flows file.
struct FlowLine
{
    uint32_t src, dst;
    uint64_t size, startNs;
    int32_t dataSpine, ackSpine;
};

/// The flows file, or an exit naming the line it cannot read.
std::vector<FlowLine>
ReadFlows(const Settings& s)
{
    std::ifstream in(s.flows);
    if (!in)
    {
        NS_FATAL_ERROR("cannot open the flows file " << s.flows);
    }
    std::vector<FlowLine> out;
    std::string line;
    uint32_t hosts = s.leaves * s.hostsPerLeaf;
    while (std::getline(in, line))
    {
        std::istringstream f(line);
        FlowLine x;
        char c1, c2, c3, c4, c5;
        f >> x.src >> c1 >> x.dst >> c2 >> x.size >> c3 >> x.startNs >> c4 >> x.dataSpine >> c5 >>
            x.ackSpine;
        bool sameLeaf = x.src / s.hostsPerLeaf == x.dst / s.hostsPerLeaf;
        auto spine = [&](int32_t sp) { return sameLeaf || (sp >= 0 && sp < int32_t(s.spines)); };
        bool ok = f && c1 == ',' && c2 == ',' && c3 == ',' && c4 == ',' && c5 == ',' &&
                  x.src < hosts && x.dst < hosts && x.src != x.dst && spine(x.dataSpine) &&
                  spine(x.ackSpine) && out.size() < (1u << 22);
        if (!ok)
        {
            NS_FATAL_ERROR("flows file " << s.flows << ", line " << out.size() + 1 << ": "
                                         << line);
        }
        out.push_back(x);
    }
    return out;
}

/// A switch's per-flow routes: each destination address to the interface it leaves by
/// (ns-3's public routing-protocol interface; local delivery stays with the node's
/// list routing, which asks this protocol only for forwarding).
class FlowRoutes : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("tenantnet::FlowRoutes")
                                .SetParent<Ipv4RoutingProtocol>()
                                .AddConstructor<FlowRoutes>();
        return tid;
    }

    /// Packets to `a` leave by `iface`.
    void Add(Ipv4Address a, uint32_t iface)
    {
        m_out[a.Get()] = iface;
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>,
                               const Ipv4Header& h,
                               Ptr<NetDevice>,
                               Socket::SocketErrno& err) override
    {
        Ptr<Ipv4Route> r = Lookup(h.GetDestination());
        err = r ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
        return r;
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& h,
                    Ptr<const NetDevice>,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback&,
                    const LocalDeliverCallback&,
                    const ErrorCallback&) override
    {
        Ptr<Ipv4Route> r = Lookup(h.GetDestination());
        if (r)
        {
            ucb(r, p, h);
        }
        return bool(r);
    }

    void NotifyInterfaceUp(uint32_t) override
    {
    }

    void NotifyInterfaceDown(uint32_t) override
    {
    }

    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void SetIpv4(Ptr<Ipv4> ipv4) override
    {
        m_ipv4 = ipv4;
    }

    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        *stream->GetStream() << m_out.size() << " flow routes\n";
    }

  private:
    /// The route to `dst`, or null.
    Ptr<Ipv4Route> Lookup(Ipv4Address dst) const
    {
        auto it = m_out.find(dst.Get());
        if (it == m_out.end())
        {
            return nullptr;
        }
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(dst);
        r->SetGateway(Ipv4Address::GetZero());
        r->SetSource(m_ipv4->GetAddress(it->second, 0).GetLocal());
        r->SetOutputDevice(m_ipv4->GetNetDevice(it->second));
        return r;
    }

    Ptr<Ipv4> m_ipv4;
    std::unordered_map<uint32_t, uint32_t> m_out;
};

/// Flow `i`'s receiver address (`sender` false) or sender address.
Ipv4Address
FlowAddress(uint32_t i, bool sender)
{
    return Ipv4Address((10u << 24) + 4 * i + (sender ? 2 : 1));
}

/// Routes `a` on `dev`'s node (a switch) out of `dev`.
void
Route(Ptr<NetDevice> dev, Ipv4Address a)
{
    static std::map<uint32_t, Ptr<FlowRoutes>> tables;
    Ptr<Ipv4> ip = dev->GetNode()->GetObject<Ipv4>();
    Ptr<FlowRoutes>& r = tables[dev->GetNode()->GetId()];
    if (!r)
    {
        r = CreateObject<FlowRoutes>();
        DynamicCast<Ipv4ListRouting>(ip->GetRoutingProtocol())->AddRoutingProtocol(r, 10);
    }
    r->Add(a, ip->GetInterfaceForDevice(dev));
}

/// The addresses and routes of the file's comment, over the host links `down`
/// (host side first) and the leaf-spine links `up[leaf][spine]` (leaf side first).
void
LeafSpineRoutes(const Settings& s,
                const std::vector<FlowLine>& flows,
                const std::vector<NetDeviceContainer>& down,
                const std::vector<std::vector<NetDeviceContainer>>& up)
{
    for (const auto& d : down)
    {
        Ptr<Ipv4> ip = d.Get(0)->GetNode()->GetObject<Ipv4>();
        Ipv4StaticRoutingHelper().GetStaticRouting(ip)->AddNetworkRouteTo(
            Ipv4Address("0.0.0.0"), Ipv4Mask("0.0.0.0"), ip->GetInterfaceForDevice(d.Get(0)));
    }
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        const FlowLine& f = flows[i];
        Ipv4Address rcv = FlowAddress(i, false), snd = FlowAddress(i, true);
        auto own = [](Ptr<NetDevice> dev, Ipv4Address a, const char* mask) {
            Ptr<Ipv4> ip = dev->GetNode()->GetObject<Ipv4>();
            ip->AddAddress(ip->GetInterfaceForDevice(dev), Ipv4InterfaceAddress(a, Ipv4Mask(mask)));
        };
        own(down[f.dst].Get(0), rcv, "255.255.255.255");
        own(down[f.src].Get(0), snd, "255.255.255.252");
        Route(down[f.dst].Get(1), rcv);
        Route(down[f.src].Get(1), snd);
        uint32_t ls = f.src / s.hostsPerLeaf, ld = f.dst / s.hostsPerLeaf;
        if (ls != ld)
        {
            // data: up at the sender's leaf, down at its spine; ACKs the other way
            Route(up[ls][f.dataSpine].Get(0), rcv);
            Route(up[ld][f.dataSpine].Get(1), rcv);
            Route(up[ld][f.ackSpine].Get(0), snd);
            Route(up[ls][f.ackSpine].Get(1), snd);
        }
    }
}

/// The leaf-spine with the flows file's senders and a receiver on every host.
void
BuildLeafSpine(const Settings& s, QueueDiscContainer& qdiscs)
{
    NodeContainer hosts, leaves, spines;
    hosts.Create(s.leaves * s.hostsPerLeaf);
    leaves.Create(s.leaves);
    spines.Create(s.spines);
    InternetStackHelper stack;
    stack.InstallAll();
    PointToPointHelper hostLink = Link(s, s.rate, s.delay);
    PointToPointHelper fabric = Link(s, s.bottleneckRate, s.delay);
    std::vector<NetDeviceContainer> down;
    std::vector<std::vector<NetDeviceContainer>> up(s.leaves);
    // queue discs first: address assignment installs fq_codel on devices without one
    for (uint32_t h = 0; h < hosts.GetN(); h++)
    {
        down.push_back(hostLink.Install(hosts.Get(h), leaves.Get(h / s.hostsPerLeaf)));
        DataRate r(s.rate);
        qdiscs.Add(Fifo(NetDeviceContainer(down[h].Get(0)), s.hostBuffer,
                        s.hostEcn ? s.ecnK : 0, r, Time(s.delay)));
        qdiscs.Add(Fifo(NetDeviceContainer(down[h].Get(1)), s.buffer, s.ecnK, r, Time(s.delay)));
    }
    for (uint32_t l = 0; l < s.leaves; l++)
    {
        for (uint32_t sp = 0; sp < s.spines; sp++)
        {
            up[l].push_back(fabric.Install(leaves.Get(l), spines.Get(sp)));
            qdiscs.Add(Fifo(up[l][sp], s.buffer, s.ecnK, DataRate(s.bottleneckRate),
                            Time(s.delay)));
        }
    }
    // every link its own /30, so that every interface is up
    Ipv4AddressHelper addr("172.16.0.0", "255.255.255.252");
    for (auto& d : down)
    {
        addr.Assign(d);
        addr.NewNetwork();
    }
    for (auto& row : up)
    {
        for (auto& d : row)
        {
            addr.Assign(d);
            addr.NewNetwork();
        }
    }
    auto flows = ReadFlows(s);
    LeafSpineRoutes(s, flows, down, up);
    InstallSinks(hosts);
    g_flows.resize(flows.size());
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        const FlowLine& f = flows[i];
        g_flows[i].size = f.size;
        InetSocketAddress peer(FlowAddress(i, false), kPort);
        Ptr<Sender> app = CreateObject<Sender>(i, peer);
        hosts.Get(f.src)->AddApplication(app);
        app->SetStartTime(NanoSeconds(f.startNs));
    }
}

} // namespace
