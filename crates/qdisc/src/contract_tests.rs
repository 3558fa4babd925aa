//! The drop-log contract, checked for every discipline under one random but
//! seeded workload: every packet offered is, at every moment, exactly one of
//! dequeued, reported dropped, or still queued — and the drop log is the only
//! place drops are reported.

use std::collections::HashSet;

use crate::rng::SplitMix64;
use crate::*;

const MS: Nanos = 1_000_000;

fn disciplines() -> Vec<(&'static str, Box<dyn Qdisc>)> {
    vec![
        ("fifo", Box::new(Fifo::new(40))),
        ("pfifo_fast-style", Box::new(Prio::new(PrioConfig::pfifo_fast_style(40)))),
        ("prio shared", Box::new(Prio::new(PrioConfig::seed_prio(40).shared_limit()))),
        ("drr", Box::new(Drr::new(DrrConfig::seed_classes(40)))),
        ("codel", Box::new(Codel::new(CodelConfig { limit: 40, ..CodelConfig::default() }))),
        ("fq_codel", Box::new(FqCodel::new(FqCodelConfig::with_limit(40)))),
        (
            "fq_codel batch 1",
            Box::new(FqCodel::new(FqCodelConfig { drop_batch_size: 1, ..FqCodelConfig::with_limit(40) })),
        ),
        ("pie", Box::new(Pie::new(PieQdiscConfig { limit: 40, ..PieQdiscConfig::default() }))),
        ("fq_pie", Box::new(FqPie::new(FqPieConfig::with_limit(40)))),
    ]
}

#[test]
fn every_packet_is_dequeued_dropped_or_queued_exactly_once() {
    const DSCPS: [u8; 5] = [dscp::AF42, dscp::AF43, dscp::AF41, dscp::CS1, dscp::DEFAULT];
    for (name, mut q) in disciplines() {
        let mut rng = SplitMix64::new(2026);
        let (mut now, mut next_id) = (0, 0u64);
        let (mut sent, mut dropped) = (Vec::new(), Vec::new());
        let (mut offered_bytes, mut left_bytes, mut dropped_bytes, mut counted) = (0u64, 0u64, 0u64, 0);
        for _ in 0..50_000 {
            now += rng.next_u64() % (2 * MS);
            // Bursts of up to 4 arrivals against up to 3 departures: overload on
            // average, with quiet spells, so every drop path is taken.
            for _ in 0..rng.next_u64() % 5 {
                let len = 64 + (rng.next_u64() % 1437) as u32;
                let dscp = DSCPS[(rng.next_u64() % 5) as usize];
                let packet = Packet::new(next_id, len, dscp, rng.next_u64() % 8);
                next_id += 1;
                offered_bytes += u64::from(len);
                let verdict = q.enqueue(packet, now);
                let before = dropped.len();
                q.drain_drops(&mut dropped);
                let arrival_dropped = dropped[before..].iter().any(|p: &Packet| p.id == packet.id);
                assert_eq!(verdict == Verdict::Dropped, arrival_dropped, "{name}: verdict matches the drop log");
            }
            for _ in 0..rng.next_u64() % 4 {
                if let Some(p) = q.dequeue(now) {
                    assert!(p.enqueued_at <= now, "{name}: stamped at enqueue");
                    left_bytes += u64::from(p.len);
                    sent.push(p.id);
                }
                q.drain_drops(&mut dropped);
            }
            dropped_bytes += dropped[counted..].iter().map(|p| u64::from(p.len)).sum::<u64>();
            counted = dropped.len();
            assert_eq!(next_id as usize, sent.len() + dropped.len() + q.len(), "{name}: packets conserved");
            assert_eq!(offered_bytes, left_bytes + dropped_bytes + q.backlog_bytes(), "{name}: bytes conserved");
        }
        // Drain what is left; AQMs may still drop on the way out.
        while let Some(p) = q.dequeue(now) {
            sent.push(p.id);
            now += MS;
        }
        q.drain_drops(&mut dropped);
        assert!(q.is_empty() && q.backlog_bytes() == 0, "{name}");
        let mut seen = HashSet::new();
        for id in sent.iter().chain(dropped.iter().map(|p| &p.id)) {
            assert!(seen.insert(*id), "{name}: packet {id} reported twice");
        }
        assert_eq!(seen.len() as u64, next_id, "{name}: every packet accounted for");
        assert!(!dropped.is_empty() && !sent.is_empty(), "{name}: the workload exercised drops");
    }
}

/// A discipline that says an empty dequeue changes nothing gives the same
/// departures and drops when a caller skips those calls as when it makes them.
#[test]
fn an_empty_dequeue_changes_nothing_where_a_discipline_says_so() {
    let noop: Vec<&str> =
        disciplines().into_iter().filter(|(_, q)| q.empty_dequeue_is_noop()).map(|(name, _)| name).collect();
    assert_eq!(noop, ["fifo", "pfifo_fast-style", "prio shared", "drr"]);
    let pairs = disciplines().into_iter().zip(disciplines()).filter(|((_, q), _)| q.empty_dequeue_is_noop());
    for ((name, mut called), (_, mut skipped)) in pairs {
        let mut rng = SplitMix64::new(99);
        let (mut now, mut next_id) = (0, 0u64);
        let (mut out_called, mut out_skipped) = (Vec::new(), Vec::new());
        let mut empty_calls = 0;
        for _ in 0..20_000 {
            now += rng.next_u64() % (2 * MS);
            if called.is_empty() {
                assert_eq!(called.dequeue(now), None, "{name}");
                empty_calls += 1;
            }
            for _ in 0..rng.next_u64() % 4 {
                let packet = Packet::new(next_id, 64 + (rng.next_u64() % 1437) as u32, (rng.next_u64() % 64) as u8, 0);
                next_id += 1;
                called.enqueue(packet, now);
                skipped.enqueue(packet, now);
            }
            for _ in 0..rng.next_u64() % 4 {
                out_called.push(called.dequeue(now));
                out_skipped.push(skipped.dequeue(now));
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            called.drain_drops(&mut a);
            skipped.drain_drops(&mut b);
            assert_eq!(a, b, "{name}: same drops");
        }
        assert_eq!(out_called, out_skipped, "{name}: same departures");
        assert!(empty_calls > 100, "{name}: the workload left the queue empty often ({empty_calls})");
    }
}

/// A discipline that says it drops only arrivals logs exactly the refused packet
/// after an enqueue that reports `Dropped`, and nothing after any other call.
#[test]
fn only_the_refused_arrival_is_dropped_where_a_discipline_says_so() {
    let only: Vec<&str> =
        disciplines().into_iter().filter(|(_, q)| q.drops_only_arrivals()).map(|(name, _)| name).collect();
    assert_eq!(only, ["fifo", "pfifo_fast-style", "prio shared", "drr"]);
    for (name, mut q) in disciplines().into_iter().filter(|(_, q)| q.drops_only_arrivals()) {
        let mut rng = SplitMix64::new(7);
        let (mut now, mut next_id, mut refused) = (0, 0u64, 0);
        let mut log = Vec::new();
        for _ in 0..20_000 {
            now += rng.next_u64() % (2 * MS);
            // Bursts past any limit, so that packets are refused.
            for _ in 0..rng.next_u64() % 8 {
                let packet = Packet::new(next_id, 64 + (rng.next_u64() % 1437) as u32, (rng.next_u64() % 64) as u8, 0);
                next_id += 1;
                let verdict = q.enqueue(packet, now);
                q.drain_drops(&mut log);
                match verdict {
                    Verdict::Dropped => {
                        assert_eq!(log.len(), 1, "{name}");
                        assert_eq!(log[0].id, packet.id, "{name}: the arriving packet");
                        refused += 1;
                    }
                    Verdict::Queued => assert!(log.is_empty(), "{name}: a queued arrival dropped {log:?}"),
                }
                log.clear();
            }
            for _ in 0..rng.next_u64() % 4 {
                q.dequeue(now);
                q.drain_drops(&mut log);
                assert!(log.is_empty(), "{name}: a dequeue dropped {log:?}");
            }
        }
        assert!(refused > 100, "{name}: the workload overflowed the queue ({refused} refused)");
    }
}

/// A discipline that says an empty one passes a packet straight through gives the
/// same departures and drops when a caller hands such packets on without
/// offering them as when it offers and dequeues them.
#[test]
fn an_empty_discipline_passes_through_where_it_says_so() {
    let through: Vec<&str> =
        disciplines().into_iter().filter(|(_, q)| q.empty_passes_through()).map(|(name, _)| name).collect();
    assert_eq!(through, ["fifo", "pfifo_fast-style", "prio shared", "drr"]);
    let pairs = disciplines().into_iter().zip(disciplines()).filter(|((_, q), _)| q.empty_passes_through());
    for ((name, mut offered), (_, mut bypassed)) in pairs {
        let mut rng = SplitMix64::new(5);
        let (mut now, mut next_id, mut passed) = (0, 0u64, 0);
        let (mut out_offered, mut out_bypassed) = (Vec::new(), Vec::new());
        for _ in 0..20_000 {
            now += rng.next_u64() % (2 * MS);
            for _ in 0..rng.next_u64() % 4 {
                let packet = Packet::new(next_id, 64 + (rng.next_u64() % 1437) as u32, (rng.next_u64() % 64) as u8, 0);
                next_id += 1;
                if offered.is_empty() && rng.below(2) == 0 {
                    assert_eq!(offered.enqueue(packet, now), Verdict::Queued, "{name}");
                    let back = offered.dequeue(now).expect("the packet just offered");
                    assert_eq!((back.id, back.len, back.dscp), (packet.id, packet.len, packet.dscp), "{name}");
                    assert!(bypassed.is_empty(), "{name}: both empty");
                    out_offered.push(Some(back.id));
                    out_bypassed.push(Some(packet.id));
                    passed += 1;
                } else {
                    offered.enqueue(packet, now);
                    bypassed.enqueue(packet, now);
                }
            }
            for _ in 0..rng.next_u64() % 4 {
                out_offered.push(offered.dequeue(now).map(|p| p.id));
                out_bypassed.push(bypassed.dequeue(now).map(|p| p.id));
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            offered.drain_drops(&mut a);
            bypassed.drain_drops(&mut b);
            assert_eq!(a, b, "{name}: same drops");
        }
        assert_eq!(out_offered, out_bypassed, "{name}: same departures");
        assert!(passed > 100, "{name}: the workload found the queue empty often ({passed})");
    }
}
