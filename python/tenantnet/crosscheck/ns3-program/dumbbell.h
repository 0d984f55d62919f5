// The cross-check's dumbbell, as tenantnet's `dumbbell`: `senders` hosts on the left
// switch, the receivers on the right switch, host links at `rate` with one-way
// `delay`, the switches joined at `bottleneck_rate` and `bottleneck_delay`. Each
// sender opens one TCP connection to `right0` (incast) or to its own receiver
// (`pairs`) and sends `size` bytes, all at time 0.

#pragma once

#include "common.h"

namespace
{

/// The dumbbell's links: each sender's, the switches', each receiver's (host side
/// first), with their queue discs; returns the links and adds the discs to `qdiscs`.
std::vector<NetDeviceContainer>
DumbbellLinks(const Settings& s,
              NodeContainer& left,
              NodeContainer& right,
              NodeContainer& sw,
              QueueDiscContainer& qdiscs)
{
    PointToPointHelper host = Link(s, s.rate, s.delay);
    PointToPointHelper core = Link(s, s.bottleneckRate, s.bottleneckDelay);
    std::vector<NetDeviceContainer> links;
    for (uint32_t i = 0; i < left.GetN(); i++)
    {
        links.push_back(host.Install(left.Get(i), sw.Get(0)));
    }
    links.push_back(core.Install(sw.Get(0), sw.Get(1)));
    for (uint32_t i = 0; i < right.GetN(); i++)
    {
        links.push_back(host.Install(right.Get(i), sw.Get(1)));
    }
    for (uint32_t k = 0; k < links.size(); k++)
    {
        bool between = k == left.GetN();
        DataRate r(between ? s.bottleneckRate : s.rate);
        Time dl(between ? s.bottleneckDelay : s.delay);
        for (uint32_t side = 0; side < 2; side++)
        {
            bool isHost = !between && side == 0;
            NetDeviceContainer one(links[k].Get(side));
            qdiscs.Add(Fifo(one, isHost ? s.hostBuffer : s.buffer,
                            isHost && !s.hostEcn ? 0 : s.ecnK, r, dl));
        }
    }
    return links;
}

/// The dumbbell with its flows' senders and receivers, ready to run.
void
BuildDumbbell(const Settings& s, QueueDiscContainer& qdiscs)
{
    NodeContainer left, right, sw;
    left.Create(s.senders);
    right.Create(s.pairs ? s.senders : 1);
    sw.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();
    // queue discs first: address assignment installs fq_codel on devices without one
    auto links = DumbbellLinks(s, left, right, sw, qdiscs);
    Ipv4AddressHelper addr;
    std::vector<Ipv4InterfaceContainer> ifs;
    for (uint32_t k = 0; k < links.size(); k++)
    {
        std::ostringstream base;
        base << "10." << (k / 250) << "." << (k % 250) << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        ifs.push_back(addr.Assign(links[k]));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    InstallSinks(right);
    g_flows.resize(s.senders);
    for (uint32_t i = 0; i < s.senders; i++)
    {
        g_flows[i].size = s.size;
        Ipv4Address dst = ifs[s.senders + 1 + (s.pairs ? i : 0)].GetAddress(0);
        Ptr<Sender> app = CreateObject<Sender>(i, InetSocketAddress(dst, kPort));
        left.Get(i)->AddApplication(app);
        app->SetStartTime(Seconds(0));
    }
}

} // namespace
