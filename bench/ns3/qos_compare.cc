// The seed-003 comparison scenario in ns-3 (Debian's ns-3.37, libns3-dev), for
// timing only: the CPU seconds ns-3 needs for the same network, traffic and queue
// disciplines that `bauxite sim study --family compare` simulates. Built and run by
// bench/ns3/run.sh; prints each flow class's delay and loss so a reader can see
// the run did the work.
//
// orchestrator -100 Mbit/s, 1 ms- A -10 Mbit/s, 5 ms- B -100 Mbit/s, 1 ms- follower i
// bg-a - A, B - bg-b (12 Mbit/s of 1400 B each way). Control (64 B, 200 pps, AF42)
// orchestrator -> followers; status (96 B, 100 pps, AF43), telemetry (512 B, 50 pps,
// AF41) and bulk (1400 B, 20 pps, CS1) followers -> orchestrator. Apps run 1 s to
// 20 s; the queue discipline under test (limit 40 packets) on both directions of
// A-B, above a 1-packet device queue, as in `crates/sim`.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <map>
#include <string>

using namespace ns3;

struct Class
{
    uint32_t payload;
    double pps;
    uint8_t dscp;
    uint16_t port;
};

static void
AddCbr(Ptr<Node> src, Ipv4Address dst, const Class& c, bool dscp, uint16_t srcIndex)
{
    InetSocketAddress remote(dst, c.port);
    remote.SetTos(dscp ? (c.dscp << 2) : 0);
    OnOffHelper onoff("ns3::UdpSocketFactory", remote);
    onoff.SetConstantRate(DataRate(uint64_t(c.payload * 8 * c.pps)), c.payload);
    ApplicationContainer app = onoff.Install(src);
    app.Start(Seconds(1.0));
    app.Stop(Seconds(20.0));
    (void)srcIndex;
}

static void
InstallQdisc(const std::string& scheduler, NetDeviceContainer bottleneck)
{
    TrafficControlHelper tch;
    if (scheduler == "fifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("40p"));
    }
    else if (scheduler == "pfifo-fast")
    {
        tch.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize", StringValue("120p"));
    }
    else if (scheduler == "prio")
    {
        uint16_t handle = tch.SetRootQueueDisc("ns3::PrioQueueDisc",
                                               "Priomap",
                                               StringValue("3 3 3 3 2 2 1 1 3 3 3 3 0 0 0 0"));
        TrafficControlHelper::ClassIdList cls = tch.AddQueueDiscClasses(handle, 4, "ns3::QueueDiscClass");
        for (auto id : cls)
        {
            tch.AddChildQueueDisc(handle, id, "ns3::FifoQueueDisc", "MaxSize", StringValue("40p"));
        }
    }
    else if (scheduler == "fq-pie")
    {
        tch.SetRootQueueDisc("ns3::FqPieQueueDisc", "MaxSize", StringValue("40p"));
    }
    else if (scheduler == "fq-codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue("40p"));
    }
    else
    {
        NS_FATAL_ERROR("unknown scheduler " << scheduler);
    }
    tch.Install(bottleneck);
}

int
main(int argc, char* argv[])
{
    std::string scheduler = "fifo";
    bool dscp = false;
    uint32_t followers = 4;
    CommandLine cmd;
    cmd.AddValue("scheduler", "fifo, pfifo-fast, prio, fq-pie, fq-codel", scheduler);
    cmd.AddValue("dscp", "mark DSCP", dscp);
    cmd.AddValue("followers", "followers", followers);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));

    Ptr<Node> orch = CreateObject<Node>();
    Ptr<Node> a = CreateObject<Node>();
    Ptr<Node> b = CreateObject<Node>();
    Ptr<Node> bgA = CreateObject<Node>();
    Ptr<Node> bgB = CreateObject<Node>();
    NodeContainer fs;
    fs.Create(followers);
    NodeContainer all(orch, a, b, bgA, bgB);
    all.Add(fs);
    InternetStackHelper stack;
    stack.Install(all);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("5ms"));

    Ipv4AddressHelper ip;
    auto link = [&](Ptr<Node> x, Ptr<Node> y, PointToPointHelper& h, bool underTest) {
        NetDeviceContainer d = h.Install(x, y);
        if (underTest)
        {
            InstallQdisc(scheduler, d);
        }
        Ipv4InterfaceContainer ifs = ip.Assign(d);
        ip.NewNetwork();
        return ifs;
    };
    ip.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer orchIf = link(orch, a, access, false);
    Ipv4InterfaceContainer bgAIf = link(bgA, a, access, false);
    link(a, b, bottleneck, true);
    Ipv4InterfaceContainer bgBIf = link(b, bgB, access, false);
    std::vector<Ipv4Address> followerAddr;
    for (uint32_t i = 0; i < followers; ++i)
    {
        followerAddr.push_back(link(b, fs.Get(i), access, false).GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const Class control{64, 200, 36, 5000};
    const Class status{96, 100, 38, 5001};
    const Class telemetry{512, 50, 34, 5002};
    const Class bulk{1400, 20, 8, 5003};
    const Class background{1400, 12e6 / (1400 * 8), 0, 5004};
    PacketSinkHelper sink("ns3::UdpSocketFactory", Address());
    for (uint16_t port = 5000; port <= 5004; ++port)
    {
        sink.SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), port)));
        sink.Install(all);
    }
    for (uint32_t i = 0; i < followers; ++i)
    {
        AddCbr(orch, followerAddr[i], control, dscp, i);
        AddCbr(fs.Get(i), orchIf.GetAddress(0), status, dscp, i);
        AddCbr(fs.Get(i), orchIf.GetAddress(0), telemetry, dscp, i);
        AddCbr(fs.Get(i), orchIf.GetAddress(0), bulk, dscp, i);
    }
    AddCbr(bgA, bgBIf.GetAddress(1), background, false, 0);
    AddCbr(bgB, bgAIf.GetAddress(0), background, false, 1);

    FlowMonitorHelper fmh;
    Ptr<FlowMonitor> monitor = fmh.InstallAll();
    Simulator::Stop(Seconds(25.0));
    Simulator::Run();

    // Per destination port: mean delay and loss, to show the work was done.
    std::map<uint16_t, std::pair<double, double>> sums; // port -> (delay sum s, rx)
    std::map<uint16_t, std::pair<uint64_t, uint64_t>> counts; // port -> (tx, rx)
    Ptr<Ipv4FlowClassifier> classifier = DynamicCast<Ipv4FlowClassifier>(fmh.GetClassifier());
    for (const auto& [id, st] : monitor->GetFlowStats())
    {
        uint16_t port = classifier->FindFlow(id).destinationPort;
        sums[port].first += st.delaySum.GetSeconds();
        sums[port].second += st.rxPackets;
        counts[port].first += st.txPackets;
        counts[port].second += st.rxPackets;
    }
    for (const auto& [port, c] : counts)
    {
        double delayMs = sums[port].second > 0 ? 1e3 * sums[port].first / sums[port].second : 0;
        std::cout << scheduler << " dscp=" << dscp << " port " << port << ": delay " << delayMs
                  << " ms, loss " << (c.first ? 100.0 * (c.first - c.second) / c.first : 0) << " %\n";
    }
    Simulator::Destroy();
    return 0;
}
