// The seed-003 comparison scenario in ns-3 (Debian's ns-3.37, libns3-dev), for
// timing: the CPU seconds ns-3 needs for the same network, traffic and queue
// disciplines that `bauxite sim study --family compare` simulates. Built and run by
// bench/ns3/run.sh; prints each flow class's delay and loss so a reader can see
// the run did the work. bench/ns3/agree.sh runs it with the options below to check
// bauxite's figures, not only its speed.
//
// orchestrator -100 Mbit/s, 1 ms- A -10 Mbit/s, 5 ms- B -100 Mbit/s, 1 ms- follower i
// bg-a - A, B - bg-b (12 Mbit/s of 1400 B each way). Control (64 B, 200 pps, AF42)
// orchestrator -> followers; status (96 B, 100 pps, AF43), telemetry (512 B, 50 pps,
// AF41) and bulk (1400 B, 20 pps, CS1) followers -> orchestrator. Apps run 1 s to
// 20 s; the queue discipline under test (limit 40 packets) on both directions of
// A-B, above a 1-packet device queue, as in `crates/sim`.
//
// Options beyond the seed's comparison, for bench/ns3/agree.sh (which runs the same
// points in `bauxite sim run` and compares). Left out, they change nothing: the
// default runs and their output are the seed comparison's, byte for byte.
//   --bgMbps=X              background UDP payload rate per direction (12; bauxite --bg-mbps)
//   --duration=S            applications stop at S s (20; bauxite --duration)
//   --accessQueue=N         every access link's queue a drop-tail FIFO of N packets, as
//                           bauxite's (--access-queue, 1000); 0: ns-3's default, FQ-CoDel
//   --followerAccessMbps=X  the followers' access links at X Mbit/s
//                           (bauxite --follower-access-mbps; the access family)
//   --bgBurstMs=X           the background on for X ms at twice --bgMbps, off for X ms
//                           (bauxite --bg-burst; the burst family)
//   --tcpFlows=N            N bulk TCP CUBIC connections each way between bg-a and bg-b,
//                           beside the UDP background (bauxite --tcp-flows; the tcp-cross
//                           family, with --bgMbps=6); printed as `tcp` lines
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

struct Class
{
    uint32_t payload;
    double pps;
    uint8_t dscp;
    uint16_t port;
};

// Applications start at 1 s and stop at --duration (20 s by default). A plain
// double: a global ns-3 Time would be built before the time resolution is set.
static const double kStartS = 1.0;

static void
AddCbr(Ptr<Node> src, Ipv4Address dst, const Class& c, bool dscp, uint16_t srcIndex, Time stop)
{
    InetSocketAddress remote(dst, c.port);
    remote.SetTos(dscp ? (c.dscp << 2) : 0);
    OnOffHelper onoff("ns3::UdpSocketFactory", remote);
    onoff.SetConstantRate(DataRate(uint64_t(c.payload * 8 * c.pps)), c.payload);
    ApplicationContainer app = onoff.Install(src);
    app.Start(Seconds(kStartS));
    app.Stop(stop);
    (void)srcIndex;
}

// The background in bursts (--bgBurstMs): on for `burstMs` at twice `mbps`, off as
// long, the same mean. How this differs from bauxite's on/off UdpApp (`bg_on_off` in
// crates/sim/src/scenario.rs), which sends whole bursts of packets:
// - bauxite sends burst_packets = round(burst / gap) packets gap = interval/2 apart
//   (interval: the steady rate's), the first at the burst's start, a burst every
//   burst_packets x interval (10 ms at 12 Mbit/s: 21 packets over 9.3 ms, every 19.6 ms);
// - OnOffApplication sends its first packet one gap into the on time and carries the
//   bits of a cut-off packet over to the next on time, so its bursts are exactly
//   `burstMs` on and off (20 ms periods) holding 21 or 22 packets (21.4 on average).
// OnOffApplication also begins with an off time where bauxite begins with a burst, so
// it is started one off time early: its first burst then starts with bauxite's, at
// 1 s (otherwise 1 s bursts would be 9 in ns-3 against bauxite's 10 in the 19 s).
static void
AddBurstyBackground(Ptr<Node> src, Ipv4Address dst, uint16_t port, uint32_t payload, double mbps,
                    double burstMs, Time stop)
{
    InetSocketAddress remote(dst, port);
    remote.SetTos(0); // the background is never marked, as AddCbr(..., false, ...)
    OnOffHelper onoff("ns3::UdpSocketFactory", remote);
    onoff.SetConstantRate(DataRate(uint64_t(std::llround(2 * mbps * 1e6))), payload);
    Ptr<ConstantRandomVariable> half = CreateObject<ConstantRandomVariable>();
    half->SetAttribute("Constant", DoubleValue(burstMs / 1e3));
    onoff.SetAttribute("OnTime", PointerValue(half));
    onoff.SetAttribute("OffTime", PointerValue(half));
    ApplicationContainer app = onoff.Install(src);
    app.Start(Seconds(kStartS) - Seconds(burstMs / 1e3));
    app.Stop(stop);
}

// The TCP receiver: reads and discards everything, and sends its peer one byte as
// each connection is accepted. Why the byte: ns-3's TcpSocketBase::Close() goes on
// sending everything the application has written (BulkSend keeps the 4 MB send buffer
// full: seconds of the bottleneck after the stop), where bauxite's TcpApp sends
// nothing, new or again, from its stop time on. A socket closed with unread received
// data is reset at once instead (ns-3 bug 426, as Linux does), and BulkSend never
// reads: so BulkSend's Close() at the stop aborts its connection with a RST. Sent at
// the accept, the byte has the whole run to arrive (a loss costs it a timeout); the
// output's last lines warn of a sender that went on after the stop all the same.
class OneByteSink : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("OneByteSink").SetParent<Application>().AddConstructor<OneByteSink>();
        return tid;
    }

    void SetPort(uint16_t port)
    {
        m_port = port;
    }

  private:
    void StartApplication() override
    {
        m_listener = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        m_listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
        m_listener->Listen();
        m_listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                      MakeCallback(&OneByteSink::Accepted, this));
    }

    void Accepted(Ptr<Socket> socket, const Address&)
    {
        socket->SetRecvCallback(MakeCallback(&OneByteSink::Discard, this));
        socket->Send(Create<Packet>(1));
        m_accepted.push_back(socket);
    }

    void Discard(Ptr<Socket> socket)
    {
        while (socket->Recv())
        {
        }
    }

    uint16_t m_port = 0;
    Ptr<Socket> m_listener;
    std::vector<Ptr<Socket>> m_accepted;
};

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
    double bgMbps = 12;
    double duration = 20;
    double followerAccessMbps = 0; // 0: the access links' 100 Mbit/s
    double bgBurstMs = 0;          // 0: a steady background
    uint32_t tcpFlows = 0;
    uint32_t accessQueue = 0; // 0: ns-3's default root queue disc
    cmd.AddValue("accessQueue",
                 "drop-tail FIFO limit of every access link, packets (0: ns-3's default, FQ-CoDel)",
                 accessQueue);
    cmd.AddValue("bgMbps", "background UDP payload rate per direction, Mbit/s", bgMbps);
    cmd.AddValue("duration", "applications stop at this time, s (they start at 1 s)", duration);
    cmd.AddValue("followerAccessMbps",
                 "the followers' access links' rate, Mbit/s (0: the access rate, 100)",
                 followerAccessMbps);
    cmd.AddValue("bgBurstMs",
                 "background on for this many ms at twice bgMbps, then off as long (0: steady)",
                 bgBurstMs);
    cmd.AddValue("tcpFlows", "bulk TCP CUBIC connections per direction between bg-a and bg-b", tcpFlows);
    cmd.Parse(argc, argv);
    if (!(bgMbps > 0) || !(duration > kStartS) || followerAccessMbps < 0 || bgBurstMs < 0)
    {
        NS_FATAL_ERROR("bgMbps and followerAccessMbps must be positive, bgBurstMs not negative, "
                       "duration over 1 s");
    }
    if (bgBurstMs / 1e3 > kStartS)
    {
        // The burst pattern starts one off time before the 1 s start (AddBurstyBackground).
        NS_FATAL_ERROR("bgBurstMs: at most 1000 (the applications start at 1 s)");
    }
    const Time stop = Seconds(duration);

    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));
    if (tcpFlows > 0)
    {
        // The TCP of bauxite's tcp-cross family (crates/sim/src/tcp.rs), as far as
        // ns-3.37 has it: CUBIC, SACK, 1448-byte segments (1500-byte packets with the
        // timestamps option, on by default in both), Linux's initial window of 10 and
        // minimum RTO of 200 ms (ns-3's default is 1 s), and one ACK per segment
        // (bauxite has no delayed ACKs; ns-3 acknowledges every second by default).
        // Buffers of 4 MB never limit the window (10 Mbit/s x 100 ms is 125 kB).
        // Recovery is ns-3's default, proportional rate reduction, as bauxite's.
        // What still differs: ns-3 opens with a handshake (bauxite's connections start
        // established); it takes a segment for lost at 3 duplicate ACKs or SACKed
        // segments above it (RFC 6675) where bauxite takes it at any later ACK (RACK
        // without a reordering window); ns-3.37's CUBIC has no Reno-friendly region and
        // caps HyStart's delay threshold at 1 s (bauxite, as Linux: 16 ms); and ns-3's
        // ACKs are cumulative, with SACK blocks, where each of bauxite's acknowledges
        // its one segment alone, so that a lost ACK is taken for a lost segment.
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName("ns3::TcpCubic")));
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
        Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
        Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
        Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
        Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    }

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
    // The followers' access links: --followerAccessMbps, else the other access links'.
    PointToPointHelper followerAccess = access;
    if (followerAccessMbps > 0)
    {
        followerAccess.SetDeviceAttribute("DataRate",
                                          DataRateValue(DataRate(uint64_t(std::llround(followerAccessMbps * 1e6)))));
    }

    Ipv4AddressHelper ip;
    // The bottleneck gets the scheduler under test; an access link, with --accessQueue,
    // bauxite's drop-tail FIFO (--access-queue, 1000 packets), else ns-3's default root
    // queue disc, installed when the address is assigned: FQ-CoDel. That never holds a
    // queue on the 100 Mbit/s links of the seed's runs (which keep it), but on a follower
    // link slower than its traffic it would keep status packets out of the way of bulk
    // ones, as bauxite's FIFO does not.
    auto link = [&](Ptr<Node> x, Ptr<Node> y, PointToPointHelper& h, bool underTest) {
        NetDeviceContainer d = h.Install(x, y);
        if (underTest)
        {
            InstallQdisc(scheduler, d);
        }
        else if (accessQueue > 0)
        {
            TrafficControlHelper tch;
            tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                                 StringValue(std::to_string(accessQueue) + "p"));
            tch.Install(d);
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
        followerAddr.push_back(link(b, fs.Get(i), followerAccess, false).GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const Class control{64, 200, 36, 5000};
    const Class status{96, 100, 38, 5001};
    const Class telemetry{512, 50, 34, 5002};
    const Class bulk{1400, 20, 8, 5003};
    // AddCbr's rate truncates to whole bit/s: 11 999 999 for 12 Mbit/s, as the seed
    // comparison always had it (5 999 999 for 6); 2 us over a 20 s run.
    const Class background{1400, bgMbps * 1e6 / (1400 * 8), 0, 5004};
    PacketSinkHelper sink("ns3::UdpSocketFactory", Address());
    for (uint16_t port = 5000; port <= 5004; ++port)
    {
        sink.SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), port)));
        sink.Install(all);
    }
    for (uint32_t i = 0; i < followers; ++i)
    {
        AddCbr(orch, followerAddr[i], control, dscp, i, stop);
        AddCbr(fs.Get(i), orchIf.GetAddress(0), status, dscp, i, stop);
        AddCbr(fs.Get(i), orchIf.GetAddress(0), telemetry, dscp, i, stop);
        AddCbr(fs.Get(i), orchIf.GetAddress(0), bulk, dscp, i, stop);
    }
    if (bgBurstMs > 0)
    {
        AddBurstyBackground(bgA, bgBIf.GetAddress(1), background.port, background.payload, bgMbps, bgBurstMs, stop);
        AddBurstyBackground(bgB, bgAIf.GetAddress(0), background.port, background.payload, bgMbps, bgBurstMs, stop);
    }
    else
    {
        AddCbr(bgA, bgBIf.GetAddress(1), background, false, 0, stop);
        AddCbr(bgB, bgAIf.GetAddress(0), background, false, 1, stop);
    }
    // TCP cross traffic: bulk senders both ways between bg-a and bg-b, to the
    // background's port (as bauxite's), unmarked; the receivers are OneByteSinks.
    if (tcpFlows > 0)
    {
        for (Ptr<Node> node : {bgA, bgB})
        {
            Ptr<OneByteSink> receiver = CreateObject<OneByteSink>();
            receiver->SetPort(background.port);
            node->AddApplication(receiver); // runs from 0 s, never stops
        }
        BulkSendHelper sender("ns3::TcpSocketFactory", Address());
        sender.SetAttribute("SendSize", UintegerValue(1448)); // a segment per write
        for (uint32_t i = 0; i < tcpFlows; ++i)
        {
            for (auto [src, dst] : {std::make_pair(bgA, bgBIf.GetAddress(1)), std::make_pair(bgB, bgAIf.GetAddress(0))})
            {
                sender.SetAttribute("Remote", AddressValue(InetSocketAddress(dst, background.port)));
                ApplicationContainer app = sender.Install(src);
                app.Start(Seconds(kStartS));
                app.Stop(stop);
            }
        }
    }

    FlowMonitorHelper fmh;
    Ptr<FlowMonitor> monitor = fmh.InstallAll();
    Simulator::Stop(stop + Seconds(5.0));
    Simulator::Run();

    // Per destination port: mean delay and loss, to show the work was done.
    std::map<uint16_t, std::pair<double, double>> sums; // port -> (delay sum s, rx)
    std::map<uint16_t, std::pair<uint64_t, uint64_t>> counts; // port -> (tx, rx)
    // TCP flows (only with --tcpFlows): the data flows to the background port and
    // their ACK flows back, each kind summed: (delay sum s, tx, rx, rx bytes, flows).
    struct TcpSums
    {
        double delaySum = 0;
        uint64_t tx = 0, rx = 0, rxBytes = 0;
        uint32_t flows = 0;
    } tcpData, tcpAcks;
    bool tcpAfterStop = false;
    Ptr<Ipv4FlowClassifier> classifier = DynamicCast<Ipv4FlowClassifier>(fmh.GetClassifier());
    for (const auto& [id, st] : monitor->GetFlowStats())
    {
        const Ipv4FlowClassifier::FiveTuple t = classifier->FindFlow(id);
        if (t.protocol == 6)
        {
            TcpSums& sum = t.destinationPort == background.port ? tcpData : tcpAcks;
            sum.delaySum += st.delaySum.GetSeconds();
            sum.tx += st.txPackets;
            sum.rx += st.rxPackets;
            sum.rxBytes += st.rxBytes;
            sum.flows += 1;
            // The stop's RST leaves at the stop; after it only the RSTs that answer the
            // ACKs still on their way (a round trip and a queue: well under 0.5 s),
            // where a sender that drained its send buffer would go on for seconds.
            tcpAfterStop |= &sum == &tcpData && st.timeLastTxPacket > stop + Seconds(0.5);
            continue;
        }
        uint16_t port = t.destinationPort;
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
    // Throughput as bauxite's (and FlowMonitor's): received IP bytes (headers, and
    // the retransmissions that arrive, included) over the senders' active time.
    const std::string tcpName = "tcp port " + std::to_string(background.port);
    for (const auto& [name, sum] : {std::make_pair(tcpName, tcpData), std::make_pair(std::string("tcp acks"), tcpAcks)})
    {
        if (sum.flows == 0)
        {
            continue;
        }
        std::cout << scheduler << " dscp=" << dscp << " " << name << ": delay "
                  << (sum.rx ? 1e3 * sum.delaySum / sum.rx : 0) << " ms, loss "
                  << (sum.tx ? 100.0 * (sum.tx - sum.rx) / sum.tx : 0) << " %, throughput "
                  << 8e-6 * sum.rxBytes / (stop - Seconds(kStartS)).GetSeconds() << " Mbit/s, " << sum.flows
                  << " flows\n";
    }
    if (tcpAfterStop)
    {
        std::cerr << "warning: a TCP sender went on sending over 0.5 s after the stop (its peer's byte came "
                     "too late, see OneByteSink): its connection's figures count that time too\n";
    }
    Simulator::Destroy();
    return 0;
}
