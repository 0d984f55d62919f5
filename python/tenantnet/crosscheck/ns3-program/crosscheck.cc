// tenantnet's ns-3 cross-check (ns-3 3.44's public API; upstream.h stands in for one
// of its functions, TcpTxBuffer::Update, to apply ns-3's later fix): a scenario's fabric and
// flows as tenantnet models them, on a dumbbell (dumbbell.h) or a leaf-spine
// (leafspine.h); what both share, and the output, in common.h; fixes to ns-3 3.44's
// SACK recovery from ns-3's development tree in upstream.h.

#include "common.h"
#include "dumbbell.h"
#include "leafspine.h"

int
main(int argc, char* argv[])
{
    Settings s = Parse(argc, argv);
    ConfigureTcp(s);
    QueueDiscContainer qdiscs;
    if (s.topology == "dumbbell")
    {
        BuildDumbbell(s, qdiscs);
    }
    else if (s.topology == "leafspine")
    {
        BuildLeafSpine(s, qdiscs);
    }
    else
    {
        NS_FATAL_ERROR("--topology: expected dumbbell or leafspine, got " << s.topology);
    }
    Simulator::Stop(Time(s.stop));
    Simulator::Run();
    Report(qdiscs);
    Simulator::Destroy();
    return 0;
}
