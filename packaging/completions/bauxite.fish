# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_bauxite_global_optspecs
    string join \n h/help V/version
end

function __fish_bauxite_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_bauxite_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_bauxite_using_subcommand
    set -l cmd (__fish_bauxite_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c bauxite -n "__fish_bauxite_needs_command" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_needs_command" -s V -l version -d 'Print version'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "up" -d 'Attach the shaper to an interface and run in the foreground; detach on SIGINT/SIGTERM; re-read the profile on SIGHUP'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "demo" -d 'The seed-000 reference demo: the standard stack against Bauxite on a link that drops to 1.5 Mbit/s'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "audit" -d 'Recompute a demo recording\'s summary from the recording alone and check it against its targets; exits 1 when a check fails (a truncated file fails the completeness check, a corrupt one (bad CRC, duplicated records) the integrity check), 2 when the file cannot be audited at all (not MCAP, not a demo recording, malformed messages)'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "bridge" -d 'Run the adaptive DDS bridge (seed 004), or benchmark it (`bauxite bridge bench`)'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "probe-responder" -d 'Answer an adaptive bridge\'s health probes for one subscriber; runs until SIGINT/SIGTERM'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "eval" -d 'Evaluations: `bauxite eval bridge` runs seed 004\'s (the adaptive bridge under bursty loss)'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "down" -d 'Remove everything Bauxite attached to an interface (idempotent)'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "reflect" -d 'The far-side reflector for link-rate probes (`rate: auto`); runs until SIGINT/SIGTERM'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "link" -d 'Run a command behind an emulated link (as mahimahi\'s mm-link): `bauxite link --up SPEC [--down SPEC] -- COMMAND`; `bauxite link trace-stats FILE` describes a trace'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "link-reap" -d 'Removes what a `bauxite link` that died left behind (started by `bauxite link` itself)'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "profile" -d 'Shaper profiles: check a file, or print the JSON Schema of the format'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "reference" -d 'Writes the pages generated from the code (command line, config keys, metrics, man pages, completions); `scripts/gen-reference` runs it on the repository'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "sim" -d 'The scheduler simulator (seed 003): one scenario or the whole study'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "status" -d 'Per-lane packets, bytes, drops, rate, backlog, drop probability and the congested state'
complete -c bauxite -n "__fish_bauxite_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l iface -d 'The egress interface toward the bottleneck' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l profile -d 'A built-in profile' -r -f -a "robot\t''
orchestrator\t''"
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l config -d 'A profile file (YAML); overrides --profile' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l rate -d 'The link rate (e.g. 1.5mbit, or auto); overrides the profile\'s' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l gateway-iface -d 'Also drop bulk early at this ingress interface with XDP (forwarding boxes)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l attach -d 'How to attach the classifier: tcx links where the kernel has them (6.6+), else a clsact filter (auto); or force one (tcx is refused on a kernel without it)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l metrics -d 'Serve Prometheus metrics on http://ADDR/metrics (overrides the profile\'s `metrics`): PORT listens on 127.0.0.1 only; write HOST:PORT to listen elsewhere' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -l ingress -d 'Also shape the interface\'s ingress (the downlink) at this rate, or `auto`, through an IFB device: the profile\'s `direction: both` (or `down`) with `ingress.rate` RATE' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand up" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l trials -d 'Trials (each runs both phases)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l duration -d 'Seconds per phase (at least 8 on the seed\'s link: it drops at 5 s and figures start 1 s later; with --link, 3 s after its first timed change)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l rate -d 'Phase 2\'s shaper rate (e.g. 1.5mbit); by default found with `rate: auto`' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l link -d 'Run on this link, emulated in userspace, instead of the seed\'s step drop (the same SPEC as `bauxite sim robot --link`): e.g. `trace=FILE,queue=100kb,delay=20ms` or `rate=50mbit`, the link of the measured direction(s), the other way uncongested with its delay; or each way\'s, `up=trace=A.up,down=trace=A.down`. Figures add the excess over the link\'s own floor' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l timeline -d 'Changes to the --link link of the measured direction(s) at given times (YAML; e.g. examples/step-drop.yaml, the seed\'s drop). Without one, figures start at 0' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l out -d 'Where results go' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -l direction -d 'Which way the streams go: up (the seed\'s, robot → base, Bauxite on the robot\'s egress), down (the operator\'s steering and a download base → robot, Bauxite on the robot\'s ingress, at --rate or with rate: auto) or both at once (Bauxite on both; each way\'s results in up/ and down/)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand demo" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand audit" -l json -d 'Print JSON'
complete -c bauxite -n "__fish_bauxite_using_subcommand audit" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -l config -d 'The bridge\'s config (YAML): topics, subscribers, classifier, rates, supervisor limits' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -l record -d 'Record classifier, path and supervisor telemetry to this MCAP file (overrides `telemetry.record`)' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -l metrics -d 'Serve Prometheus metrics on http://ADDR/metrics (overrides `metrics`): PORT listens on 127.0.0.1 only; write HOST:PORT to listen elsewhere' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -f -a "schema" -d 'Print the JSON Schema of bridge config files, for editors (every key, its default and bounds; `docs/reference/bridge-config.md` is made from it)'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -f -a "bench" -d 'Measure the bridge: added latency against a direct subscription, forwarding capacity, CPU and memory'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and not __fish_seen_subcommand_from schema bench help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from schema" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from bench" -l duration -d 'Seconds of 30 Hz LaserScan-sized traffic for latency, CPU and memory' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from bench" -l capacity-duration -d 'Seconds of back-to-back publishing per capacity size' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from bench" -l sizes -d 'Sample sizes (bytes) for the capacity runs' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from bench" -l domain -d 'The DDS domain to run in (keep it apart from live systems); at most 232, whose RTPS ports are the last below 65536' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from bench" -l out -d 'Where `summary.json`, `summary.md` and the bridge\'s log go' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from bench" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "schema" -d 'Print the JSON Schema of bridge config files, for editors (every key, its default and bounds; `docs/reference/bridge-config.md` is made from it)'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "bench" -d 'Measure the bridge: added latency against a direct subscription, forwarding capacity, CPU and memory'
complete -c bauxite -n "__fish_bauxite_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand probe-responder" -l config -d 'The bridge\'s config file: its `dds` and `classifier` sections give the domain, the interfaces and the probe topics (defaults without it)' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand probe-responder" -l name -d 'The subscriber\'s name, as the bridge\'s `subscribers` list knows it (default: the host name)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand probe-responder" -l answer-delay -d 'Hold every answer this long (e.g. 80ms): emulates a slow link for demos and tests' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand probe-responder" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and not __fish_seen_subcommand_from bridge peer help" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and not __fish_seen_subcommand_from bridge peer help" -f -a "bridge" -d 'Seed 004\'s evaluation of the adaptive bridge: baseline, bridge, ablation and toggle runs with real DDS peers in network namespaces, the slow subscriber behind bursty loss'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and not __fish_seen_subcommand_from bridge peer help" -f -a "peer" -d 'The RustDDS peer of the evaluation (the protocol of crates/eval/peers)'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and not __fish_seen_subcommand_from bridge peer help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from bridge" -l scenario -d 'A scenario, several separated by commas, or `all` (default: all; with --quick, the six the issue\'s checks need)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from bridge" -l rmw -d 'DDS implementations, separated by commas: rustdds, cyclonedds, ros2-fastdds' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from bridge" -l out -d 'Where summary.json, summary.md, charts and each run\'s recording and logs go' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from bridge" -l quick -d 'Short runs for CI (46 s each, the impaired baseline 48 s, figures after 16 s) instead of the paper\'s (180 s, 120 s, 240 s toggle)'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from bridge" -l no-realtime -d 'Run the critical path (publisher, bridge, critical subscriber) as ordinary processes at nice -10, like the rest, and let idle CPUs halt, instead of SCHED_FIFO and idle CPUs polling as a robot runs its control loop: the figures then include the testbed\'s contention for the machine\'s cores and the CPUs\' wake-ups'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from bridge" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from peer" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from peer" -f -a "pub" -d 'Publish LaserScans from a fixed-period timer'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from peer" -f -a "sub" -d 'Read LaserScans and print each one\'s stamp and arrival'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from peer" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "bridge" -d 'Seed 004\'s evaluation of the adaptive bridge: baseline, bridge, ablation and toggle runs with real DDS peers in network namespaces, the slow subscriber behind bursty loss'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "peer" -d 'The RustDDS peer of the evaluation (the protocol of crates/eval/peers)'
complete -c bauxite -n "__fish_bauxite_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand down" -l iface -d 'The interface' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand down" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand reflect" -l port -d 'The UDP port to answer on' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand reflect" -l bind -d 'The address to listen on. Loopback unless given (nothing listens beyond loopback unless configured to): pass the address the robot\'s probes reach, e.g. `--bind 10.0.0.2` (or `--bind 0.0.0.0` for every IPv4 address)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand reflect" -l allow -d 'Answer only these peers (`ADDR` or `ADDR/PREFIX`, repeatable); default: any' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand reflect" -l key-file -d 'Answer only probes signed with the key in this file (HMAC-SHA256), and sign the answers; the robot\'s profile names the same file as `auto_rate.key_file`' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand reflect" -l metrics -d 'Serve Prometheus metrics (answers, refusals by reason) on http://ADDR/metrics: PORT listens on 127.0.0.1 only; write HOST:PORT to listen elsewhere' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand reflect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -l up -d 'The uplink (the command → the host): the SPEC `demo --link` and `sim robot --link` take, e.g. `trace=FILE,queue=100kb,delay=20ms` or `rate=1.5mbit`' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -l down -d 'The downlink (the host → the command); unlimited if not given' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -l timeline -d 'Changes to the uplink at given times (YAML, as `demo --timeline` takes them)' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -l record -d 'Write every packet\'s fate (`fates.csv`), the link\'s figures (`summary.json`), and per 100 ms each direction\'s capacity, throughput, queue delay and drops (`link.mcap`, with `foxglove_layout.json` to view it in Foxglove) here' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -l between -d 'Put the link between two network namespaces that exist (`ip netns add`), NS_A sending the uplink, for test beds: each gets an interface `bxl-PID`, an address and a route to the other\'s through the link, and nothing else changes. Or between two interfaces of this namespace that hold no address: every frame is bridged through the link, and nothing is made. The command, if any, runs in this namespace (with `BAUXITE_LINK_A` and `BAUXITE_LINK_B` naming the two namespaces\' addresses); without one the link lasts until Ctrl-C or SIGTERM' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -l as-root -d 'Run the command as root even under sudo (by default it runs as the user who ran sudo)'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -a "trace-stats" -d 'A trace\'s length, mean rate, percentiles of its one-second rates and its silent seconds (mahimahi\'s format, or CSV rows `time_s,rate_mbps`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and not __fish_seen_subcommand_from trace-stats help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and __fish_seen_subcommand_from trace-stats" -l json -d 'Print JSON'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and __fish_seen_subcommand_from trace-stats" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and __fish_seen_subcommand_from help" -f -a "trace-stats" -d 'A trace\'s length, mean rate, percentiles of its one-second rates and its silent seconds (mahimahi\'s format, or CSV rows `time_s,rate_mbps`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand link; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand link-reap" -l netns -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link-reap" -l host-iface -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link-reap" -l nft-table -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link-reap" -l ip-forward -r
complete -c bauxite -n "__fish_bauxite_using_subcommand link-reap" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and not __fish_seen_subcommand_from check schema help" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and not __fish_seen_subcommand_from check schema help" -f -a "check" -d 'Validate a profile file exactly as `bauxite up` would (keys, values, bounds and relations), print it with every default filled in; exit 1 naming the file, line and key of the first problem'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and not __fish_seen_subcommand_from check schema help" -f -a "schema" -d 'Print the JSON Schema of profile files, for editors (e.g. yaml-language-server\'s `# yaml-language-server: $schema=FILE`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and not __fish_seen_subcommand_from check schema help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and __fish_seen_subcommand_from schema" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and __fish_seen_subcommand_from help" -f -a "check" -d 'Validate a profile file exactly as `bauxite up` would (keys, values, bounds and relations), print it with every default filled in; exit 1 naming the file, line and key of the first problem'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and __fish_seen_subcommand_from help" -f -a "schema" -d 'Print the JSON Schema of profile files, for editors (e.g. yaml-language-server\'s `# yaml-language-server: $schema=FILE`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand profile; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand reference" -l out -d 'The repository root (or any directory) to write `docs/reference/` and `packaging/` under' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand reference" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -f -a "run" -d 'Run one scenario and write flows.csv, classes.csv, summary.json and summary.md'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -f -a "study" -d 'Run scenario families (the seed\'s study and more) in parallel, or one shard of them'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -f -a "merge" -d 'Combine the directories of every shard of a study into exactly the files an unsharded run writes'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -f -a "robot" -d 'The robot\'s lanes, the shaper\'s control laws and a (trace-driven) link in simulated time: both demo phases, the demo\'s figures and charts'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -f -a "agree" -d 'Compare `bauxite demo --link` runs with `sim robot` runs of the same links, with issue 12\'s tolerances: one table row per phase and link'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and not __fish_seen_subcommand_from run study merge robot agree help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l scheduler -d 'The bottleneck scheduler: fifo, pfifo-fast, prio, fq-pie, fq-codel, drr, codel, pie' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l dscp -d 'DSCP marking of the application classes' -r -f -a "on\t''
off\t''"
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l seed -d 'Random seed (start offsets, the disciplines\' own randomness)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l start-jitter-ms -d 'Application start-time jitter, ms (0: all start together, as in the seed)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l followers -d 'Followers, at most 16000 (study: the compare, load and queue families\' count)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bg-mbps -d 'Background payload rate per direction, Mbit/s (study: all but the load family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l queue -d 'Bottleneck queue limit, packets (study: all but the queue family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l duration -d 'Simulated seconds (applications stop then; the network drains after)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l start -d 'Application start time, s' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bg-flows -d 'Background flows per direction (0: no background; at most 8000)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bg-payload -d 'Background UDP payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bg-start-offset-ms -d 'Background start delay after the other applications, ms' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l limit-mode -d 'Whether a priority scheduler\'s limit is per band or shared: per-band | shared' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l device-queue -d 'Device transmit-queue length under the qdisc, packets (every link)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l access-queue -d 'Drop-tail queue of the access links, packets' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bottleneck-mbps -d 'Bottleneck rate, Mbit/s' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bottleneck-delay-ms -d 'Bottleneck propagation delay, ms (at most one day)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l access-mbps -d 'Access link rate, Mbit/s (every access link)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l follower-access-mbps -d 'The followers\' access links\' rate, Mbit/s, if not --access-mbps (study: all but the access family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l access-delay-ms -d 'Access link propagation delay, ms (at most one day)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l control-bytes -d 'Control payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l control-pps -d 'Control packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l control-dscp -d 'Control DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l status-bytes -d 'Status payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l status-pps -d 'Status packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l status-dscp -d 'Status DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l telemetry-bytes -d 'Telemetry payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l telemetry-pps -d 'Telemetry packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l telemetry-dscp -d 'Telemetry DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bulk-bytes -d 'Bulk payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bulk-pps -d 'Bulk packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bulk-dscp -d 'Bulk DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bg-burst -d 'The background in on/off bursts of this many ms at twice --bg-mbps, each followed by a silence as long: the same mean rate (0: steady, the default; study: all but the burst family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l bg-burst-pareto -d 'With --bg-burst: each burst\'s length and the silence after it drawn from a Pareto distribution of this shape (> 1; 1.5 is heavy-tailed, self-similar traffic) with that mean, instead of every one exactly --bg-burst long' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l deadline -d 'An application deadline, `CLASS=MS` (control, status, telemetry, bulk; may be repeated): packets later than it count in `deadline_miss_pct` as lost (study: the deadline family\'s, instead of control 10, status 50, telemetry 200)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l tcp-flows -d 'Bulk TCP connections (CUBIC) per direction between the background endpoints, beside the UDP background (study: all but the tcp-cross family, which sweeps them with half the UDP background)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l link -d 'The bottleneck as a radio link: a `--link` SPEC (`trace=FILE`, `rate=`, `loss=`, `ge=`, `delay=`, `jitter=`, `seed=`) for both directions, or `up=SPEC,down=SPEC` for the followers\' uplink and downlink. Its delay replaces --bottleneck-delay-ms; the scheduler keeps the queue (study: all but the wireless family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l out -d 'Where results go' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -l png -d 'Also write each chart as PNG (the SVG is always written). Rasterising is the costliest output: 7 % of a comparison study\'s CPU'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l family -d 'Families: compare, load, followers, queue, access, burst, deadline, tcp-cross, wireless, or all (comma-separated)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l schedulers -d 'Schedulers to compare (comma-separated); default the seed\'s five and drr' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l seeds -d 'Repetitions of each point with random start offsets; with more than one, figures are means with `_ci95` half-widths (and the start jitter must be above 0, or the repetitions would all be the same run). At most 1000, and at most a million flow records held over the whole study' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l jobs -d 'Worker threads (default: one per core; at most four per core)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l seed -d 'First seed; repetition k uses seed + k' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l start-jitter-ms -d 'Start-time jitter, ms (default: 0 for one seed, 100 for several; 0 is refused with several seeds)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l load-bg-mbps -d 'Background rates of the load sweep, Mbit/s per direction (comma-separated)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l follower-counts -d 'Follower counts of the follower sweep (comma-separated)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l queue-limits -d 'Queue limits of the queue sweep, packets (comma-separated)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l access-values -d 'The followers\' access-link rates of the access sweep, Mbit/s (comma-separated; default 1,2,5,10,100)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l burst-values -d 'Burst lengths of the burst sweep, ms (comma-separated; default 1,10,100,1000)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l tcp-values -d 'TCP connections per direction of the tcp-cross sweep (comma-separated; default 1,2,4,8)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l wireless-values -d 'The wireless sweep\'s bottleneck links, `--link` SPECs separated by `;` (default the seed\'s 10 Mbit/s and 5 ms without loss, with 1 % loss and with Gilbert–Elliott bursts: `rate=10mbit,delay=5ms;…,loss=1%;…,ge=1%/25%/80%/0`)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l shard -d 'Run only the K-th of N equal, contiguous slices of the study\'s runs (K from 0 to N-1) and write that shard\'s files; `bauxite sim merge` combines them' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l followers -d 'Followers, at most 16000 (study: the compare, load and queue families\' count)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bg-mbps -d 'Background payload rate per direction, Mbit/s (study: all but the load family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l queue -d 'Bottleneck queue limit, packets (study: all but the queue family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l duration -d 'Simulated seconds (applications stop then; the network drains after)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l start -d 'Application start time, s' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bg-flows -d 'Background flows per direction (0: no background; at most 8000)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bg-payload -d 'Background UDP payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bg-start-offset-ms -d 'Background start delay after the other applications, ms' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l limit-mode -d 'Whether a priority scheduler\'s limit is per band or shared: per-band | shared' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l device-queue -d 'Device transmit-queue length under the qdisc, packets (every link)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l access-queue -d 'Drop-tail queue of the access links, packets' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bottleneck-mbps -d 'Bottleneck rate, Mbit/s' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bottleneck-delay-ms -d 'Bottleneck propagation delay, ms (at most one day)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l access-mbps -d 'Access link rate, Mbit/s (every access link)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l follower-access-mbps -d 'The followers\' access links\' rate, Mbit/s, if not --access-mbps (study: all but the access family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l access-delay-ms -d 'Access link propagation delay, ms (at most one day)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l control-bytes -d 'Control payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l control-pps -d 'Control packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l control-dscp -d 'Control DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l status-bytes -d 'Status payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l status-pps -d 'Status packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l status-dscp -d 'Status DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l telemetry-bytes -d 'Telemetry payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l telemetry-pps -d 'Telemetry packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l telemetry-dscp -d 'Telemetry DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bulk-bytes -d 'Bulk payload, bytes' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bulk-pps -d 'Bulk packets/s per follower' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bulk-dscp -d 'Bulk DSCP' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bg-burst -d 'The background in on/off bursts of this many ms at twice --bg-mbps, each followed by a silence as long: the same mean rate (0: steady, the default; study: all but the burst family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l bg-burst-pareto -d 'With --bg-burst: each burst\'s length and the silence after it drawn from a Pareto distribution of this shape (> 1; 1.5 is heavy-tailed, self-similar traffic) with that mean, instead of every one exactly --bg-burst long' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l deadline -d 'An application deadline, `CLASS=MS` (control, status, telemetry, bulk; may be repeated): packets later than it count in `deadline_miss_pct` as lost (study: the deadline family\'s, instead of control 10, status 50, telemetry 200)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l tcp-flows -d 'Bulk TCP connections (CUBIC) per direction between the background endpoints, beside the UDP background (study: all but the tcp-cross family, which sweeps them with half the UDP background)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l link -d 'The bottleneck as a radio link: a `--link` SPEC (`trace=FILE`, `rate=`, `loss=`, `ge=`, `delay=`, `jitter=`, `seed=`) for both directions, or `up=SPEC,down=SPEC` for the followers\' uplink and downlink. Its delay replaces --bottleneck-delay-ms; the scheduler keeps the queue (study: all but the wireless family)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l out -d 'Where results go' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -l png -d 'Also write each chart as PNG (the SVG is always written). Rasterising is the costliest output: 7 % of a comparison study\'s CPU'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from study" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from merge" -l out -d 'Where the merged results go (not one of the shards)' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from merge" -l png -d 'Also write each chart as PNG (the SVG is always written). Rasterising is the costliest output: 7 % of a comparison study\'s CPU'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from merge" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l profile -d 'A built-in profile (robot, orchestrator) or a profile YAML file' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l link -d 'The link, e.g. `trace=FILE,queue=100kb,delay=20ms` or `rate=1.5mbit` (default: the seed\'s step drop, 50 -> 1.5 Mbit/s at 5 s, 100 KB modem buffer, the demo TBF\'s 7570-byte bucket); or each way\'s, `up=trace=A.up,down=trace=A.down`, as `bauxite demo --link` takes them: --direction picks the one measured, and the other gives the return path its delay (ACKs and probe answers are never queued). With --sweep, give it several times to sweep over several links' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l timeline -d 'Changes to the --link link(s) at given times (YAML; e.g. examples/step-drop.yaml), as `bauxite demo --timeline` takes them' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l sweep -d 'Sweep one auto-rate parameter: `auto_rate.KEY=v1,v2,...` (rate auto), writing a table and the throughput/delay frontier instead of one run\'s figures' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l rate -d 'The protected phase\'s shaper rate: a rate known to the shaper (1.5mbit) or auto' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l direction -d 'Which way the streams go: up (robot → base, the shaper on the robot\'s egress) or down (base → robot over the --link link, the shaper on the robot\'s ingress after it, as `bauxite up` with `direction: down` runs it; the references likewise)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l duration -d 'Simulated seconds per phase (at most a day)' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l video-rate -d 'The video encoder\'s mean bit rate (the seed\'s stream: 3.5mbit). Far above the link (e.g. 100mbit) the video is an upload that takes all it is given, as an iperf3 or a file transfer does: what the shaper leaves unused shows in full' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l seeds -d 'Seeds to run (1 to 1000); figures pool them' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l seed -d 'First seed; seed k uses seed + k' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -l out -d 'Where results go' -r -F
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from robot" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from agree" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "run" -d 'Run one scenario and write flows.csv, classes.csv, summary.json and summary.md'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "study" -d 'Run scenario families (the seed\'s study and more) in parallel, or one shard of them'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "merge" -d 'Combine the directories of every shard of a study into exactly the files an unsharded run writes'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "robot" -d 'The robot\'s lanes, the shaper\'s control laws and a (trace-driven) link in simulated time: both demo phases, the demo\'s figures and charts'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "agree" -d 'Compare `bauxite demo --link` runs with `sim robot` runs of the same links, with issue 12\'s tolerances: one table row per phase and link'
complete -c bauxite -n "__fish_bauxite_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand status" -l iface -d 'The interface' -r
complete -c bauxite -n "__fish_bauxite_using_subcommand status" -l json -d 'Print JSON'
complete -c bauxite -n "__fish_bauxite_using_subcommand status" -s h -l help -d 'Print help'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "up" -d 'Attach the shaper to an interface and run in the foreground; detach on SIGINT/SIGTERM; re-read the profile on SIGHUP'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "demo" -d 'The seed-000 reference demo: the standard stack against Bauxite on a link that drops to 1.5 Mbit/s'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "audit" -d 'Recompute a demo recording\'s summary from the recording alone and check it against its targets; exits 1 when a check fails (a truncated file fails the completeness check, a corrupt one (bad CRC, duplicated records) the integrity check), 2 when the file cannot be audited at all (not MCAP, not a demo recording, malformed messages)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "bridge" -d 'Run the adaptive DDS bridge (seed 004), or benchmark it (`bauxite bridge bench`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "probe-responder" -d 'Answer an adaptive bridge\'s health probes for one subscriber; runs until SIGINT/SIGTERM'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "eval" -d 'Evaluations: `bauxite eval bridge` runs seed 004\'s (the adaptive bridge under bursty loss)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "down" -d 'Remove everything Bauxite attached to an interface (idempotent)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "reflect" -d 'The far-side reflector for link-rate probes (`rate: auto`); runs until SIGINT/SIGTERM'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "link" -d 'Run a command behind an emulated link (as mahimahi\'s mm-link): `bauxite link --up SPEC [--down SPEC] -- COMMAND`; `bauxite link trace-stats FILE` describes a trace'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "link-reap" -d 'Removes what a `bauxite link` that died left behind (started by `bauxite link` itself)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "profile" -d 'Shaper profiles: check a file, or print the JSON Schema of the format'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "reference" -d 'Writes the pages generated from the code (command line, config keys, metrics, man pages, completions); `scripts/gen-reference` runs it on the repository'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "sim" -d 'The scheduler simulator (seed 003): one scenario or the whole study'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "status" -d 'Per-lane packets, bytes, drops, rate, backlog, drop probability and the congested state'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and not __fish_seen_subcommand_from up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "schema" -d 'Print the JSON Schema of bridge config files, for editors (every key, its default and bounds; `docs/reference/bridge-config.md` is made from it)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "bench" -d 'Measure the bridge: added latency against a direct subscription, forwarding capacity, CPU and memory'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "bridge" -d 'Seed 004\'s evaluation of the adaptive bridge: baseline, bridge, ablation and toggle runs with real DDS peers in network namespaces, the slow subscriber behind bursty loss'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "peer" -d 'The RustDDS peer of the evaluation (the protocol of crates/eval/peers)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from link" -f -a "trace-stats" -d 'A trace\'s length, mean rate, percentiles of its one-second rates and its silent seconds (mahimahi\'s format, or CSV rows `time_s,rate_mbps`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from profile" -f -a "check" -d 'Validate a profile file exactly as `bauxite up` would (keys, values, bounds and relations), print it with every default filled in; exit 1 naming the file, line and key of the first problem'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from profile" -f -a "schema" -d 'Print the JSON Schema of profile files, for editors (e.g. yaml-language-server\'s `# yaml-language-server: $schema=FILE`)'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "run" -d 'Run one scenario and write flows.csv, classes.csv, summary.json and summary.md'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "study" -d 'Run scenario families (the seed\'s study and more) in parallel, or one shard of them'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "merge" -d 'Combine the directories of every shard of a study into exactly the files an unsharded run writes'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "robot" -d 'The robot\'s lanes, the shaper\'s control laws and a (trace-driven) link in simulated time: both demo phases, the demo\'s figures and charts'
complete -c bauxite -n "__fish_bauxite_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "agree" -d 'Compare `bauxite demo --link` runs with `sim robot` runs of the same links, with issue 12\'s tolerances: one table row per phase and link'
