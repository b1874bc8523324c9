//! The broadcast benchmark: one source process, `R` receiver processes on real UDP
//! multicast, loss injected at each receiver. A run has two phases:
//!
//! 1. latency: messages paced below capacity; each receiver records, per message, the
//!    time from the sender accepting it to the application getting it (one host clock);
//!    the sender's peak window is recorded for the memory model;
//! 2. rate: messages sent as fast as flow control allows; the rate is messages over the
//!    time until every receiver holds every message (the sender's flush).
//!
//! Receivers check every message's number: `lost`, `duplicated` and `reordered` count
//! application-level violations (all must be 0).

use std::io;
use std::net::SocketAddrV4;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::model::WindowModel;
use crate::{clock, Event, Key, LossModel, NetError, Receiver, ReceiverConfig, Recovery, Sender, SenderConfig, UdpNet};

/// One benchmark configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSpec {
    /// The recovery scheme's name.
    pub scheme: String,
    /// Injected loss rate of group datagrams at each receiver.
    pub loss: f64,
    /// Mean loss burst length (1: independent losses).
    pub burst: f64,
    /// Receiver processes.
    pub receivers: u32,
    /// Bytes per message.
    pub message_bytes: usize,
    /// Messages of the latency phase.
    pub latency_messages: u64,
    /// Gap between messages in the latency phase.
    pub interval_us: u64,
    /// Messages of the rate phase.
    pub rate_messages: u64,
    /// The sender's flow-control window.
    pub window_bytes: usize,
}

/// What a receiver process needs (passed to it as one JSON argument).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReceiverArgs {
    /// The multicast group.
    pub group: SocketAddrV4,
    /// The recovery scheme's name.
    pub scheme: String,
    /// The group key, as hex.
    pub key_hex: String,
    /// Injected loss rate.
    pub loss: f64,
    /// Mean loss burst length.
    pub burst: f64,
    /// Seed of the injected loss.
    pub seed: u64,
    /// Messages of the latency phase.
    pub latency_messages: u64,
    /// Messages in all (latency and rate phases).
    pub total_messages: u64,
}

/// What a receiver process prints (one JSON line).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReceiverReport {
    /// Per message of the latency phase, microseconds from the sender's accepting it to delivery.
    pub latencies_us: Vec<f32>,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages never delivered.
    pub lost: u64,
    /// Messages delivered twice (must be 0).
    pub duplicated: u64,
    /// Messages delivered out of order (must be 0).
    pub reordered: u64,
    /// Missing packets that arrived later.
    pub recovered: u64,
    /// Mean microseconds from detecting a missing packet to holding it.
    pub recovery_us_mean: f64,
    /// Longest such recovery, microseconds.
    pub recovery_us_max: f64,
    /// NACKs this receiver sent.
    pub nacks_sent: u64,
    /// NACKs it held back because another receiver's covered them.
    pub nacks_suppressed: u64,
    /// Reads it sent to the sender's read service.
    pub reads_sent: u64,
    /// Duplicate packets dropped.
    pub duplicates_dropped: u64,
    /// Why the receiver failed, if it did.
    pub error: Option<String>,
}

/// One row of results: the fields `chatty bench broadcast --json` promises, then detail.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// The recovery scheme's name.
    pub scheme: String,
    /// Injected loss rate.
    pub loss: f64,
    /// Receiver processes.
    pub receivers: u32,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// Messages per second in the rate phase.
    pub rate_msgs_per_s: f64,
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// Messages lost, over every receiver.
    pub lost: u64,
    /// Messages duplicated, over every receiver.
    pub duplicated: u64,
    /// Messages reordered, over every receiver.
    pub reordered: u64,
    /// Mean loss burst length.
    pub burst: f64,
    /// Bytes per message.
    pub message_bytes: usize,
    /// Megabytes per second in the rate phase.
    pub rate_mb_per_s: f64,
    /// Missing packets recovered, over every receiver.
    pub recovered_packets: u64,
    /// Mean recovery time, microseconds.
    pub recovery_us_mean: f64,
    /// Longest recovery, microseconds.
    pub recovery_us_max: f64,
    /// Packets multicast again for NACKs.
    pub repairs_multicast: u64,
    /// Packets the read service returned.
    pub reads_served: u64,
    /// NACKs sent, over every receiver.
    pub nacks_sent: u64,
    /// NACKs held back, over every receiver.
    pub nacks_suppressed: u64,
    /// The sender's group round-trip estimate, microseconds.
    pub grtt_us: f64,
    /// Latency phase: packets per second, peak window, and the model's figure.
    pub paced_packets_per_s: f64,
    /// Seconds of the latency phase.
    pub paced_seconds: f64,
    /// Mean bytes per datagram.
    pub packet_bytes: f64,
    /// The sender's largest window in the latency phase, bytes.
    pub peak_window_bytes: u64,
    /// Lossless hold time the model uses (nominal, or measured by [`calibrate_models`]).
    pub ack_delay_us: f64,
    /// The window the model predicts, bytes.
    pub model_window_bytes: f64,
    /// The configured window limit, bytes.
    pub window_limit_bytes: usize,
}

/// Runs one configuration; `launch` starts a receiver process for the given arguments
/// with its stdout piped (the CLI re-executes itself).
pub fn run(spec: &RunSpec, launch: &dyn Fn(&ReceiverArgs) -> io::Result<Child>) -> Result<RunResult, NetError> {
    let recovery = Recovery::from_name(&spec.scheme).ok_or_else(|| NetError::Config(format!("unknown scheme `{}`", spec.scheme)))?;
    let seed = clock::now_ns() ^ (std::process::id() as u64) << 32;
    let key_hex = format!("{:032x}", (seed as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835));
    let key = Key::derive(key_hex.as_bytes());
    // A group and port of our own, so that concurrent runs never hear each other.
    let group = SocketAddrV4::new([239, 77, (seed >> 8) as u8, seed as u8].into(), 20_000 + (seed >> 16) as u16 % 30_000);
    let mut cfg = SenderConfig::new(group, recovery, key);
    cfg.window_bytes = spec.window_bytes;
    let sender = Sender::start(&UdpNet::default(), cfg)?;
    let total = spec.latency_messages + spec.rate_messages;
    let mut children = Vec::new();
    for i in 0..spec.receivers {
        let args = ReceiverArgs {
            group,
            scheme: spec.scheme.clone(),
            key_hex: key_hex.clone(),
            loss: spec.loss,
            burst: spec.burst,
            seed: seed.wrapping_add(i as u64 * 7919),
            latency_messages: spec.latency_messages,
            total_messages: total,
        };
        children.push(launch(&args)?);
    }
    let outcome = drive(spec, &sender);
    let reports: Vec<Result<ReceiverReport, NetError>> = children.into_iter().map(collect).collect();
    let (paced, rate_s) = outcome?;
    let reports = reports.into_iter().collect::<Result<Vec<_>, _>>()?;
    if let Some(e) = reports.iter().find_map(|r| r.error.clone()) {
        return Err(NetError::Failed(format!("a receiver failed: {e}")));
    }
    let stats = sender.stats();
    let mut latencies: Vec<f32> = reports.iter().flat_map(|r| r.latencies_us.iter().copied()).collect();
    latencies.sort_by(f32::total_cmp);
    let pct = |q: f64| latencies.get(((latencies.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0) as f64;
    let recovered: u64 = reports.iter().map(|r| r.recovered).sum();
    let recovery_us_mean = reports.iter().map(|r| r.recovery_us_mean * r.recovered as f64).sum::<f64>() / recovered.max(1) as f64;
    let sum = |f: fn(&ReceiverReport) -> u64| reports.iter().map(f).sum::<u64>();
    let packets = spec.message_bytes.div_ceil(1400).max(1);
    let datagram = (spec.message_bytes + packets * (crate::packet::HEADER + crate::packet::TAG)) as f64 / packets as f64;
    let mut result = RunResult {
        scheme: spec.scheme.clone(),
        loss: spec.loss,
        receivers: spec.receivers,
        p50_us: pct(0.5),
        p99_us: pct(0.99),
        mean_us: latencies.iter().map(|&l| l as f64).sum::<f64>() / latencies.len().max(1) as f64,
        rate_msgs_per_s: spec.rate_messages as f64 / rate_s,
        lost: sum(|r| r.lost),
        duplicated: sum(|r| r.duplicated),
        reordered: sum(|r| r.reordered),
        burst: spec.burst,
        message_bytes: spec.message_bytes,
        rate_mb_per_s: (spec.rate_messages * spec.message_bytes as u64) as f64 / rate_s / 1e6,
        recovered_packets: recovered,
        recovery_us_mean,
        recovery_us_max: reports.iter().map(|r| r.recovery_us_max).fold(0.0, f64::max),
        repairs_multicast: stats.repairs,
        reads_served: stats.reads_served,
        nacks_sent: sum(|r| r.nacks_sent),
        nacks_suppressed: sum(|r| r.nacks_suppressed),
        grtt_us: stats.grtt_us,
        paced_packets_per_s: paced.packets_per_s,
        paced_seconds: paced.duration.as_secs_f64(),
        packet_bytes: datagram,
        peak_window_bytes: paced.peak_window,
        ack_delay_us: ACK_DELAY.as_secs_f64() * 1e6,
        model_window_bytes: 0.0,
        window_limit_bytes: spec.window_bytes,
    };
    result.model_window_bytes = result.model().peak_bytes(paced.duration);
    Ok(result)
}

/// The nominal lossless hold time of a packet in the window: receivers acknowledge on
/// every heartbeat (1 ms) or every 64 packets, and the ACK needs a one-way trip back.
pub const ACK_DELAY: Duration = Duration::from_micros(1_100);

impl RunResult {
    /// The window model for this run's latency phase.
    pub fn model(&self) -> WindowModel {
        WindowModel {
            rate_pps: self.paced_packets_per_s,
            packet_bytes: self.packet_bytes,
            receivers: self.receivers,
            loss: self.loss,
            repair_loss: if self.scheme == "nack" { self.loss } else { 0.0 },
            ack_delay: Duration::from_secs_f64(self.ack_delay_us / 1e6),
            recovery: Duration::from_secs_f64(self.recovery_us_mean / 1e6),
        }
    }
}

/// Replaces the nominal ACK delay of each lossy run's model by the one measured in the
/// lossless run of the same scheme and receiver count (peak window / (rate × packet)),
/// so that the model is checked on what loss adds.
pub fn calibrate_models(runs: &mut [RunResult]) {
    let measured: Vec<(String, u32, usize, f64)> = runs
        .iter()
        .filter(|r| r.loss == 0.0 && r.paced_packets_per_s > 0.0)
        .map(|r| {
            (
                r.scheme.clone(),
                r.receivers,
                r.window_limit_bytes,
                r.peak_window_bytes as f64 / (r.paced_packets_per_s * r.packet_bytes) * 1e6,
            )
        })
        .collect();
    for r in runs.iter_mut() {
        if let Some((.., us)) = measured.iter().find(|(s, n, w, _)| *s == r.scheme && *n == r.receivers && *w == r.window_limit_bytes) {
            r.ack_delay_us = *us;
            r.model_window_bytes = r.model().peak_bytes(Duration::from_secs_f64(r.paced_seconds));
        }
    }
}

struct Paced {
    packets_per_s: f64,
    peak_window: u64,
    duration: Duration,
}

const JOIN_WAIT: Duration = Duration::from_secs(30);
const FLUSH_WAIT: Duration = Duration::from_secs(120);

/// The source's two phases; returns the latency phase's figures and the rate phase's seconds.
fn drive(spec: &RunSpec, sender: &Sender) -> Result<(Paced, f64), NetError> {
    sender.wait_for_receivers(spec.receivers as usize, JOIN_WAIT)?;
    let mut number = 0u64;
    let before = sender.stats().packets;
    sender.reset_peak_window();
    let start = Instant::now();
    for i in 0..spec.latency_messages {
        let due = start + Duration::from_micros(spec.interval_us * i);
        while Instant::now() < due {
            std::hint::spin_loop();
        }
        sender.send(&message(number, spec.message_bytes))?;
        number += 1;
    }
    sender.flush(FLUSH_WAIT)?;
    let duration = start.elapsed();
    let st = sender.stats();
    let paced = Paced { packets_per_s: (st.packets - before) as f64 / duration.as_secs_f64(), peak_window: st.peak_window_bytes, duration };
    let start = Instant::now();
    for _ in 0..spec.rate_messages {
        sender.send(&message(number, spec.message_bytes))?;
        number += 1;
    }
    sender.flush(FLUSH_WAIT)?;
    Ok((paced, start.elapsed().as_secs_f64()))
}

/// Message `i` of the benchmark: its number, then filler up to `bytes`.
fn message(i: u64, bytes: usize) -> Vec<u8> {
    let mut m = vec![(i % 251) as u8; bytes.max(8)];
    m[..8].copy_from_slice(&i.to_le_bytes());
    m
}

fn collect(child: Child) -> Result<ReceiverReport, NetError> {
    let out = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).map_err(|e| {
        NetError::Failed(format!(
            "a receiver process ended with {} and no report ({e}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    })
}

/// How long a receiver waits for the next message before it gives up.
const IDLE_LIMIT: Duration = Duration::from_secs(60);

/// The receiver process's work: join, take every message, check and time them.
pub fn receive(args: &ReceiverArgs) -> ReceiverReport {
    let mut report = ReceiverReport::default();
    if let Err(e) = receive_into(args, &mut report) {
        report.error = Some(e.to_string());
    }
    report
}

fn receive_into(args: &ReceiverArgs, report: &mut ReceiverReport) -> Result<(), NetError> {
    let recovery = Recovery::from_name(&args.scheme).ok_or_else(|| NetError::Config(format!("unknown scheme `{}`", args.scheme)))?;
    let mut cfg = ReceiverConfig::new(args.group, recovery, Key::derive(args.key_hex.as_bytes()));
    cfg.loss = (args.loss > 0.0).then(|| LossModel::new(args.loss, args.burst, args.seed));
    cfg.seed = args.seed;
    let receiver = Receiver::start(&UdpNet::default(), cfg)?;
    let mut seen = vec![false; args.total_messages as usize];
    let mut expected = 0u64;
    let mut distinct = 0u64;
    while distinct < args.total_messages {
        let event = receiver
            .recv(IDLE_LIMIT)?
            .ok_or_else(|| NetError::Timeout(format!("{distinct} of {} messages arrived", args.total_messages)))?;
        let Event::Message(m) = event else {
            return Err(NetError::Failed(format!("stream interrupted: {event:?}")));
        };
        let now = clock::now_ns();
        let i = m.data.get(..8).map_or(u64::MAX, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        match seen.get_mut(i as usize) {
            None => report.lost += 1, // garbage number: count as a violation
            Some(true) => report.duplicated += 1,
            Some(s) => {
                *s = true;
                distinct += 1;
                if i != expected {
                    report.reordered += 1;
                }
                expected = i + 1;
                if i < args.latency_messages {
                    report.latencies_us.push(now.saturating_sub(m.stamp_ns) as f32 / 1e3);
                }
            }
        }
        report.delivered += 1;
    }
    report.lost += args.total_messages - distinct;
    let st = receiver.leave();
    report.recovered = st.recovered;
    report.recovery_us_mean = st.recovery_ns_total as f64 / st.recovered.max(1) as f64 / 1e3;
    report.recovery_us_max = st.recovery_ns_max as f64 / 1e3;
    report.nacks_sent = st.nacks_sent;
    report.nacks_suppressed = st.nacks_suppressed;
    report.reads_sent = st.reads_sent;
    report.duplicates_dropped = st.duplicates;
    Ok(())
}

/// Starts a receiver process: `exe PREFIX... ARGS_JSON`, stdout and stderr piped.
pub fn receiver_command(exe: &std::path::Path, prefix: &[&str], args: &ReceiverArgs) -> io::Result<Child> {
    let json = serde_json::to_string(args).map_err(io::Error::other)?;
    std::process::Command::new(exe).args(prefix).arg(json).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()
}
