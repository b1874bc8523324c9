//! The choice among transports from a calibration (`--comm auto`): [`choose`] within
//! a process, from the measured routes between its GPUs, and [`choose_across`]
//! between the processes of a job, from its measured whole exchanges.

use crate::calibrate::Calibration;
use crate::transport::Transport;

/// Picks the transport with the least predicted time for one exchange in which
/// part g (on device `ordinals[g]`) sends `bytes[g]` to every other part: per sender,
/// its copies to every peer one after another; the exchange lasts as long as the
/// slowest sender; NCCL broadcasts run one root after another. A transport without a
/// measurement is no candidate; without any, p2p (or staged without peer access).
pub fn choose(c: Option<&Calibration>, ordinals: &[usize], bytes: &[u64], available: &[Transport]) -> Transport {
    let n = bytes.len();
    let dev = |g: usize| Some(ordinals[g]);
    let predict = |t: Transport| -> Option<f64> {
        let c = c?;
        let m = t.method();
        if t == Transport::Nccl {
            let mut sum = 0.0;
            for (r, &b) in bytes.iter().enumerate().filter(|(_, &b)| b > 0) {
                sum += c.predict(m, dev(r), dev((r + 1) % n), b)?;
            }
            return Some(sum);
        }
        let mut slowest = 0f64;
        for (g, &b) in bytes.iter().enumerate().filter(|(_, &b)| b > 0) {
            let mut t_g = 0.0;
            for j in (0..n).filter(|&j| j != g) {
                t_g += c.predict(m, dev(g), dev(j), b)?;
            }
            slowest = slowest.max(t_g);
        }
        Some(slowest)
    };
    available
        .iter()
        .filter_map(|&t| predict(t).map(|s| (t, s)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, _)| t)
        .unwrap_or(if available.contains(&Transport::P2p) { Transport::P2p } else { Transport::Staged })
}

/// [`choose`] between processes: the transport of least predicted time for an
/// exchange in which part g of the job sends `bytes[g]` to every other, from a job's
/// calibration ([`crate::calibrate::for_job`]: whole exchanges, every part sending the
/// same bytes), at the parts' mean. Without a measurement: NCCL where it was made
/// (a GPU of its own for every part), else MPI.
pub fn choose_across(c: Option<&Calibration>, bytes: &[u64], available: &[Transport]) -> Transport {
    let mean = bytes.iter().sum::<u64>().div_ceil(bytes.len().max(1) as u64);
    let measured = c.and_then(|c| {
        (available.iter())
            .filter_map(|&t| c.predict(t.method(), None, None, mean).map(|s| (t, s)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(t, _)| t)
    });
    measured.unwrap_or(if available.contains(&Transport::Nccl) { Transport::Nccl } else { Transport::Mpi })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Sample;
    use crate::transport::Method;

    fn line(method: Method, src: usize, dst: usize, lat: f64, gbps: f64) -> Vec<Sample> {
        [4u64, 1 << 20, 1 << 28]
            .into_iter()
            .map(|b| Sample {
                transport: method,
                src: Some(src),
                dst: Some(dst),
                bytes: b,
                seconds: lat + b as f64 / gbps / 1e9,
                gb_per_s: 0.0,
            })
            .collect()
    }

    #[test]
    fn the_choice_follows_the_measurements_by_size() {
        let mut samples = Vec::new();
        for (s, d) in [(0, 1), (1, 0)] {
            samples.extend(line(Method::P2p, s, d, 10e-6, 400.0));
            samples.extend(line(Method::PeerStore, s, d, 2e-6, 50.0));
            samples.extend(line(Method::Staged, s, d, 20e-6, 30.0));
        }
        let c = Calibration { host: "h".into(), gpus: vec![], unix_time: 0, samples };
        let all = Transport::ALL;
        assert_eq!(choose(Some(&c), &[0, 1], &[64, 128], &all), Transport::Peer);
        assert_eq!(choose(Some(&c), &[0, 1], &[64 << 20, 1 << 20], &all), Transport::P2p);
        assert_eq!(choose(Some(&c), &[0, 1], &[64 << 20, 0], &[Transport::Staged, Transport::Uva]), Transport::Staged);
        assert_eq!(choose(None, &[0, 1], &[1, 1], &all), Transport::P2p);
        assert_eq!(choose(None, &[0, 1], &[1, 1], &[Transport::Staged, Transport::Uva]), Transport::Staged);
    }

    #[test]
    fn between_processes_the_choice_follows_the_job_calibration() {
        // MPI through host memory: low latency, little bandwidth; NCCL the reverse.
        let exchange = |method: Method, lat: f64, gbps: f64| {
            [4u64, 1 << 16, 1 << 26].map(|b| Sample {
                transport: method,
                src: None,
                dst: None,
                bytes: b,
                seconds: lat + b as f64 / gbps / 1e9,
                gb_per_s: 0.0,
            })
        };
        let samples = [exchange(Method::Mpi, 20e-6, 5.0), exchange(Method::NcclBcast, 60e-6, 100.0)].concat();
        let c = Calibration { host: "job".into(), gpus: vec![], unix_time: 0, samples };
        let both = [Transport::Mpi, Transport::Nccl];
        assert_eq!(choose_across(Some(&c), &[4, 8], &both), Transport::Mpi);
        assert_eq!(choose_across(Some(&c), &[16 << 20, 0], &both), Transport::Nccl, "judged at the mean, 8 MiB");
        assert_eq!(choose_across(Some(&c), &[16 << 20, 0], &[Transport::Mpi]), Transport::Mpi, "only what was made");
        assert_eq!(choose_across(None, &[4, 4], &both), Transport::Nccl);
        assert_eq!(choose_across(None, &[4, 4], &[Transport::Mpi]), Transport::Mpi);
        // A machine's calibration (routes between GPUs) says nothing about processes.
        let machine = Calibration { host: "h".into(), gpus: vec![], unix_time: 0, samples: line(Method::Mpi, 0, 1, 1.0, 1.0) };
        assert_eq!(choose_across(Some(&machine), &[4, 4], &both), Transport::Nccl);
    }
}
