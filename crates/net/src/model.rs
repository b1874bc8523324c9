//! The analytical window model: how much memory a sender must retain so that no
//! packet a receiver may still need is discarded.
//!
//! A packet stays in the window until the slowest member acknowledges it. Without loss
//! that takes `T_ack` (the ACK delay), so by Little's law the window holds
//! `r · s · T_ack` bytes at a rate of `r` packets/s of `s` bytes. The window is
//! cumulative, so with loss its head is held by the oldest packet some receiver still
//! misses: one recovery round `L` per attempt, and an attempt itself fails with
//! probability `q` (the repair's loss: `p` for multicast NACK repairs, ~0 for RMA reads).
//! Over a run of `D` seconds there are `n = r · D · R · p` (packet, receiver) losses;
//! the worst of them needs `k = 1 + ln n / ln(1/q)` rounds (1 when `q = 0`). The peak:
//!
//! ```text
//! W_peak = r · s · (T_ack + k · L)      (n ≥ 1; r · s · T_ack otherwise)
//! ```

use std::time::Duration;

/// Inputs of the model.
#[derive(Clone, Copy, Debug)]
pub struct WindowModel {
    /// Packets sent per second.
    pub rate_pps: f64,
    /// Bytes retained per packet (datagram size).
    pub packet_bytes: f64,
    /// Receivers in the group.
    pub receivers: u32,
    /// Loss rate of group datagrams at each receiver.
    pub loss: f64,
    /// Probability that one recovery attempt fails.
    pub repair_loss: f64,
    /// Time from sending a packet to the slowest member's ACK of it, without loss.
    pub ack_delay: Duration,
    /// One recovery round: gap detection to repaired packet.
    pub recovery: Duration,
}

impl WindowModel {
    /// Worst recovery rounds among the losses of a `run`.
    pub fn rounds(&self, run: Duration) -> f64 {
        let losses = self.rate_pps * run.as_secs_f64() * self.receivers as f64 * self.loss;
        if losses < 1.0 {
            return 0.0;
        }
        if self.repair_loss <= 0.0 {
            return 1.0;
        }
        1.0 + losses.ln() / (1.0 / self.repair_loss).ln()
    }

    /// The peak window in bytes over a run of this length.
    pub fn peak_bytes(&self, run: Duration) -> f64 {
        let hold = self.ack_delay.as_secs_f64() + self.rounds(run) * self.recovery.as_secs_f64();
        self.rate_pps * self.packet_bytes * hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossless_is_littles_law_and_loss_adds_rounds() {
        let mut m = WindowModel {
            rate_pps: 100_000.0,
            packet_bytes: 1_456.0,
            receivers: 4,
            loss: 0.0,
            repair_loss: 0.0,
            ack_delay: Duration::from_millis(2),
            recovery: Duration::from_millis(1),
        };
        let run = Duration::from_secs(1);
        assert!((m.peak_bytes(run) - 100_000.0 * 1_456.0 * 0.002).abs() < 1.0);
        m.loss = 0.01;
        assert_eq!(m.rounds(run), 1.0);
        m.repair_loss = 0.01;
        // 4000 losses, each repair lost with 1%: the worst needs 1 + log_100(4000) rounds.
        assert!((m.rounds(run) - (1.0 + 4000f64.ln() / 100f64.ln())).abs() < 1e-9);
        assert!(m.peak_bytes(run) > 100_000.0 * 1_456.0 * 0.004);
    }
}
