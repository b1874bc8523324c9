//! The GMPI report's experiments on [`Messaging`] (what `chatty bench messaging`
//! and the GPU tests run): kernel- against host-initiated ping-pong, GPU-GPU and
//! GPU-host by size, the raw mapped-memory flag round trip they are measured
//! against, the message rate with and without warp-aggregated posting, MPI ordering,
//! and waits nobody answers.

use std::time::{Duration, Instant};

use cudarc::driver::{sys, CudaSlice, CudaStream};
use serde::Serialize;

use chatty_comm::messaging::{Kind, Request, Status, INLINE_BYTES, NUMBERS};

use chatty_comm::cuda::{addr, copy_and_wait, Check, Dev, Pinned};

use super::Messaging;
use crate::launch;
use crate::{GpuError, Result};

fn wait_stream(stream: &CudaStream, deadline: Instant, what: &str) -> Result<()> {
    loop {
        // SAFETY: a query on a live stream.
        match unsafe { sys::cuStreamQuery(stream.cu_stream()) } {
            sys::CUresult::CUDA_SUCCESS => return Ok(()),
            sys::CUresult::CUDA_ERROR_NOT_READY if Instant::now() < deadline => std::thread::yield_now(),
            sys::CUresult::CUDA_ERROR_NOT_READY => {
                return Err(GpuError::Messaging(format!("{what} did not finish in time (device-side timeouts should have ended it)")))
            }
            e => return Err(GpuError::Driver { what: what.to_string(), source: cudarc::driver::DriverError(e) }),
        }
    }
}

/// A kernel's status word: 0, or the worst `GMPI_*` failure it saw.
fn kernel_status(code: u32) -> Status {
    if code == 0 {
        Status::Done
    } else {
        Status::from_code(code)
    }
}

fn status_error(what: &str, code: u32) -> GpuError {
    let why = match kernel_status(code) {
        Status::TimedOut => "timed out (no match, or the proxy stopped answering)",
        Status::Truncated => "truncated (receive buffer smaller than the message)",
        Status::PeerGone => "the peer's proxy is gone",
        _ => "failed",
    };
    GpuError::Messaging(format!("{what}: a message {why}"))
}

impl Messaging {
    fn deadline(&self) -> Instant {
        Instant::now() + 3 * self.config.timeout + Duration::from_secs(5)
    }

    /// A status word pair on `rank`'s GPU, zeroed.
    fn status(&self, rank: usize) -> Result<CudaSlice<u32>> {
        self.gpus[rank].zeros::<u32>(2, "a status word")
    }

    fn read_status(&self, rank: usize, s: &CudaSlice<u32>) -> Result<[u32; 2]> {
        let v = self.gpus[rank].download(s, 2, "a status word")?;
        Ok([v[0], v[1]])
    }

    /// Kernel-initiated ping-pong of `bytes` between GPU ranks `a` (initiator) and
    /// `b`, `rounds` times; seconds per round trip between CUDA events around the
    /// initiator's kernel.
    pub fn pingpong_gpus(&self, a: usize, b: usize, bytes: u64, rounds: u32) -> Result<f64> {
        let bufs = [self.gpus[a].zeros::<u8>(bytes as usize, "a message")?, self.gpus[b].zeros::<u8>(bytes as usize, "a message")?];
        let st = [self.status(a)?, self.status(b)?];
        let ping = |me: usize, peer: usize, i: usize, initiator: u32| {
            let (gpu, how) = self.on(me, 1)?;
            // SAFETY: a message buffer of `bytes` and a status of two words on `me`.
            unsafe { launch::gmpi_pingpong(gpu, how, self.ctx(me), peer as u32, &bufs[i], bytes, rounds, initiator, &st[i]) }
        };
        ping(b, a, 1, 0)?;
        let seconds = self.timed(a, || ping(a, b, 0, 1))?;
        wait_stream(&self.gpus[b].stream, self.deadline(), "the ping-pong's echo kernel")?;
        for (i, r) in [(0, a), (1, b)] {
            let [s, _] = self.read_status(r, &st[i])?;
            if s != 0 {
                return Err(status_error("kernel-initiated ping-pong", s));
            }
        }
        Ok(seconds / rounds as f64)
    }

    /// Kernel-initiated ping-pong between GPU rank `a` and host rank `h` (a thread
    /// here posting through its ring into host-mapped memory).
    pub fn pingpong_host(&mut self, a: usize, h: usize, bytes: u64, rounds: u32) -> Result<f64> {
        let host = self.host_buffer(bytes as usize)?;
        let buf = self.gpus[a].zeros::<u8>(bytes as usize, "a message")?;
        let st = self.status(a)?;
        let hub = self.hub.clone();
        let (hrank, grank) = (h as u32, a as u32);
        let addr = host.device();
        let host_ptr = host.0.host as usize;
        let give_up = self.deadline();
        let echo = std::thread::spawn(move || -> Status {
            for r in 0..rounds {
                for (i, kind) in [Kind::Recv, Kind::Send].into_iter().enumerate() {
                    let id = (2 * r + i as u32) % NUMBERS;
                    // A small send travels in its slot, as a GPU's does.
                    let inline = (kind == Kind::Send && bytes as usize <= INLINE_BYTES).then(|| {
                        let mut b = [0u8; INLINE_BYTES];
                        // SAFETY: `bytes` of the live pinned buffer this thread echoes.
                        unsafe { std::ptr::copy_nonoverlapping(host_ptr as *const u8, b.as_mut_ptr(), bytes as usize) };
                        b
                    });
                    if !hub.ring(hrank).push(Request { kind, peer: grank, tag: r, request: id, bytes, addr, inline }, &|| false) {
                        return Status::TimedOut;
                    }
                    if inline.is_some() {
                        continue; // an eager send is complete once posted
                    }
                    let s = loop {
                        match hub.status(hrank, id) {
                            Status::Pending if Instant::now() < give_up => std::hint::spin_loop(),
                            Status::Pending => break Status::TimedOut,
                            s => break s,
                        }
                    };
                    if s != Status::Done {
                        return s;
                    }
                }
            }
            Status::Done
        });
        let seconds = self.timed(a, || {
            let (gpu, how) = self.on(a, 1)?;
            // SAFETY: a message buffer of `bytes` and a status of two words on `a`.
            unsafe { launch::gmpi_pingpong(gpu, how, self.ctx(a), h as u32, &buf, bytes, rounds, 1, &st) }
        });
        let echoed = echo.join().unwrap_or(Status::PeerGone);
        let seconds = seconds?;
        let [s, _] = self.read_status(a, &st)?;
        if s != 0 || echoed != Status::Done {
            return Err(status_error("kernel-initiated GPU-host ping-pong", s.max(echoed as u32)));
        }
        Ok(seconds / rounds as f64)
    }

    /// Runs `launch` on rank `r`'s stream between two events after the stream is
    /// idle; waits (with the deadline) and returns the seconds between the events.
    fn timed(&self, r: usize, launch: impl FnOnce() -> Result<()>) -> Result<f64> {
        let gpu = &self.gpus[r];
        let start = gpu.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).check("recording an event")?;
        launch()?;
        let end = gpu.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).check("recording an event")?;
        wait_stream(&gpu.stream, self.deadline(), "a messaging kernel")?;
        Ok(start.elapsed_ms(&end).check("reading events")? as f64 / 1e3)
    }

    /// `gmpi_flags` on GPU rank `me` over the flags at `[mine, theirs]` (words the
    /// kernel may write: device, peer or host-mapped memory).
    fn flags(&self, me: usize, [mine, theirs]: [u64; 2], rounds: u32, initiator: u32, status: &CudaSlice<u32>) -> Result<()> {
        let (gpu, how) = self.on(me, 1)?;
        let timeout_ns = self.config.timeout.as_nanos() as u64;
        // SAFETY: both flags are words the kernel may write; the status holds two
        // words on `me`.
        unsafe { launch::gmpi_flags(gpu, how, Dev::at(mine), Dev::at(theirs), rounds, initiator, timeout_ns, status) }
    }

    /// The raw round trip: a flag written by GPU rank `a` into `b`'s memory (a GPU
    /// rank's device memory, or host-mapped memory echoed by a host thread when `b`
    /// is `None`) and answered. Seconds per round trip.
    pub fn flag_round_trip(&mut self, a: usize, b: Option<usize>, rounds: u32) -> Result<f64> {
        let st = self.status(a)?;
        let seconds = match b {
            Some(b) => {
                let flags = [self.gpus[a].zeros::<u32>(1, "a flag")?, self.gpus[b].zeros::<u32>(1, "a flag")?];
                let (fa, fb) = (addr(&flags[0]), addr(&flags[1]));
                let sb = self.status(b)?;
                self.flags(b, [fb, fa], rounds, 0, &sb)?;
                let s = self.timed(a, || self.flags(a, [fa, fb], rounds, 1, &st))?;
                wait_stream(&self.gpus[b].stream, self.deadline(), "the flag echo kernel")?;
                s
            }
            None => {
                let flags = self.host_buffer(8)?;
                let (ping, pong) = (flags.device(), flags.device() + 4);
                let host = flags.0.clone();
                let stop = Instant::now() + self.config.timeout;
                let echo = std::thread::spawn(move || {
                    let words = host.host as *mut u32;
                    for r in 1..=rounds {
                        // SAFETY: two words of a live pinned buffer; volatile because
                        // the GPU writes `ping` and reads `pong`.
                        unsafe {
                            while std::ptr::read_volatile(words.add(1)) != r {
                                if Instant::now() > stop {
                                    return;
                                }
                            }
                            std::ptr::write_volatile(words, r);
                        }
                    }
                });
                // The kernel's "mine" is word 0 (ping, written by the host), "theirs" word 1.
                let s = self.timed(a, || self.flags(a, [ping, pong], rounds, 1, &st));
                let _ = echo.join();
                s?
            }
        };
        let [s, _] = self.read_status(a, &st)?;
        if s != 0 {
            return Err(status_error("flag round trip", s));
        }
        Ok(seconds / rounds as f64)
    }

    /// Host-initiated ping-pong: copy `bytes` from GPU rank `a` to GPU rank `b` (or
    /// to host-mapped memory when `b` is `None`), synchronise, copy back, synchronise;
    /// seconds per round trip.
    pub fn host_initiated(&mut self, a: usize, b: Option<usize>, bytes: u64, rounds: u32) -> Result<f64> {
        let src = self.gpus[a].zeros::<u8>(bytes as usize, "a message")?;
        let sa = addr(&src);
        let (other, _keep) = match b {
            Some(b) => {
                let d = self.gpus[b].zeros::<u8>(bytes as usize, "a message")?;
                (addr(&d), Some(d))
            }
            None => (self.host_buffer(bytes as usize)?.device(), None),
        };
        let stream = &self.gpus[a].stream;
        self.gpus[a].ctx.bind_to_thread().check("binding the GPU")?;
        // SAFETY: both addresses hold `bytes` (allocated above).
        let copy = |dst: u64, src: u64| unsafe { copy_and_wait(stream, dst, src, bytes as usize) }.check("a host-initiated copy");
        copy(other, sa)?;
        let start = Instant::now();
        for _ in 0..rounds {
            copy(other, sa)?;
            copy(sa, other)?;
        }
        Ok(start.elapsed().as_secs_f64() / rounds as f64)
    }

    /// Message rate: `threads` threads of GPU rank `a` each send `per_thread`
    /// messages of 8 bytes to GPU rank `b`, whose as many threads receive them (from
    /// any rank, any tag), every message's payload in host-mapped memory. Returns
    /// messages per second (wall time of both kernels) and checks every payload.
    pub fn rate(&mut self, a: usize, b: usize, threads: u32, per_thread: u32, aggregate: bool) -> Result<f64> {
        let send = self.host_buffer(8 * threads as usize)?;
        let recv = self.host_buffer(8 * threads as usize)?;
        let st = [self.status(a)?, self.status(b)?];
        let start = Instant::now();
        let rate = |me: usize, peer: usize, kind: Kind, buf: u64, status: &CudaSlice<u32>| {
            let (gpu, how) = self.on(me, threads)?;
            // SAFETY: `buf` is host-mapped memory of a word per thread; the status
            // holds two words on `me`.
            unsafe {
                launch::gmpi_rate(gpu, how, self.ctx(me), peer as u32, kind as u32, Dev::at(buf), per_thread, aggregate as u32, status)
            }
        };
        rate(b, a, Kind::Recv, recv.device(), &st[1])?;
        rate(a, b, Kind::Send, send.device(), &st[0])?;
        wait_stream(&self.gpus[a].stream, self.deadline(), "the sending kernel")?;
        wait_stream(&self.gpus[b].stream, self.deadline(), "the receiving kernel")?;
        let seconds = start.elapsed().as_secs_f64();
        for (i, r) in [(0, a), (1, b)] {
            let [s, _] = self.read_status(r, &st[i])?;
            if s != 0 {
                return Err(status_error("message rate", s));
            }
        }
        // Every receive slot holds some sender's last or earlier payload: (thread, i).
        let got = recv.words(2 * threads as usize);
        if got.chunks(2).any(|w| w[1] >= threads || w[0] >= per_thread) {
            return Err(GpuError::Messaging("message rate: a received payload was not one that was sent".into()));
        }
        Ok((threads as u64 * per_thread as u64) as f64 / seconds)
    }

    /// Ordering and tag matching on the GPUs: rank `a` sends `n` tagged values
    /// through its ring, rank `b` receives them out of tag order. Returns how many
    /// values broke MPI's rules (0 when correct), or the failure.
    pub fn ordering(&mut self, a: usize, b: usize, n: u32) -> Result<u32> {
        let data = [self.gpus[a].zeros::<u32>(n as usize, "values")?, self.gpus[b].zeros::<u32>(n as usize, "values")?];
        let ids = [self.gpus[a].zeros::<u32>(n as usize, "ids")?, self.gpus[b].zeros::<u32>(n as usize, "ids")?];
        let st = [self.status(a)?, self.status(b)?];
        let ordered = |me: usize, peer: usize, i: usize, sender: u32| {
            let (gpu, how) = self.on(me, 1)?;
            // SAFETY: values and ids hold n words on `me`, the status two.
            unsafe { launch::gmpi_ordered(gpu, how, self.ctx(me), peer as u32, &data[i], n, sender, &ids[i], &st[i]) }
        };
        ordered(b, a, 1, 0)?;
        ordered(a, b, 0, 1)?;
        wait_stream(&self.gpus[a].stream, self.deadline(), "the sending kernel")?;
        wait_stream(&self.gpus[b].stream, self.deadline(), "the receiving kernel")?;
        let (sa, sb) = (self.read_status(a, &st[0])?, self.read_status(b, &st[1])?);
        if sa[0] != 0 || sb[0] != 0 {
            return Err(status_error("ordering test", sa[0].max(sb[0])));
        }
        Ok(sb[1])
    }

    /// Kernel-initiated ping-pong across processes (GMPI over MPI): this process's
    /// GPU rank and the job's rank `peer`, served by another process, which calls this
    /// too with the other `initiator`. Seconds per round trip, between CUDA events
    /// around this side's kernel (the initiator's is the figure).
    pub fn pingpong_job(&self, peer: u32, initiator: bool, bytes: u64, rounds: u32) -> Result<f64> {
        let buf = self.gpus[0].zeros::<u8>(bytes as usize, "a message")?;
        let st = self.status(0)?;
        let seconds = self.timed(0, || {
            let (gpu, how) = self.on(0, 1)?;
            // SAFETY: a message buffer of `bytes` and a status of two words.
            unsafe { launch::gmpi_pingpong(gpu, how, self.ctx(0), peer, &buf, bytes, rounds, initiator as u32, &st) }
        })?;
        let [s, _] = self.read_status(0, &st)?;
        if s != 0 {
            return Err(status_error("kernel-initiated ping-pong across processes", s));
        }
        Ok(seconds / rounds as f64)
    }

    /// The host-initiated ping-pong across processes it is measured against, on a GPU
    /// buffer of this process's GPU rank: each way, the sender copies the buffer into
    /// pinned host memory and `send`s it, the receiver `recv`s it there and copies it
    /// into its GPU buffer (MPI_Send and MPI_Recv, given by the caller, which owns
    /// MPI). One untimed round first; seconds per round trip.
    pub fn host_initiated_job(
        &self,
        initiator: bool,
        bytes: u64,
        rounds: u32,
        send: &dyn Fn(&[u8]) -> std::result::Result<(), String>,
        recv: &dyn Fn(&mut [u8]) -> std::result::Result<(), String>,
    ) -> Result<f64> {
        let gpu = &self.gpus[0];
        let buf = gpu.zeros::<u8>(bytes as usize, "a message")?;
        let host = Pinned::new(&gpu.ctx, bytes.max(1) as usize, "a staging buffer")?;
        // SAFETY: `bytes` of the pinned allocation, touched only through this slice.
        let staged = unsafe { std::slice::from_raw_parts_mut(host.host.cast::<u8>(), bytes as usize) };
        let (dev, at) = (addr(&buf), staged.as_ptr() as u64);
        // SAFETY: both addresses hold `bytes` (allocated above).
        let copy = |dst: u64, src: u64| unsafe { copy_and_wait(&gpu.stream, dst, src, bytes as usize) }.check("a host-initiated copy");
        let mpi = |e: String| GpuError::Messaging(format!("host-initiated ping-pong across processes: {e}"));
        gpu.ctx.bind_to_thread().check("binding the GPU")?;
        let mut start = Instant::now();
        for round in 0..=rounds {
            if round == 1 {
                start = Instant::now();
            }
            if initiator {
                copy(at, dev)?;
                send(staged).map_err(mpi)?;
                recv(staged).map_err(mpi)?;
                copy(dev, at)?;
            } else {
                recv(staged).map_err(mpi)?;
                copy(dev, at)?;
                copy(at, dev)?;
                send(staged).map_err(mpi)?;
            }
        }
        Ok(start.elapsed().as_secs_f64() / rounds.max(1) as f64)
    }

    /// GPU rank `a` waits for a message from rank `peer` that never comes; returns
    /// the status its kernel saw (timed out, or peer gone once the proxies stop).
    pub fn unanswered(&mut self, a: usize, peer: usize, stop_proxies_after: Option<Duration>) -> Result<Status> {
        let buf = self.gpus[a].zeros::<u8>(8, "a message")?;
        let st = self.status(a)?;
        let (gpu, how) = self.on(a, 1)?;
        // SAFETY: a message buffer of 8 bytes and a status of two words on `a`.
        unsafe { launch::gmpi_pingpong(gpu, how, self.ctx(a), peer as u32, &buf, 8, 1, 0, &st) }?;
        if let Some(after) = stop_proxies_after {
            std::thread::sleep(after);
            self.stop_proxies();
        }
        wait_stream(&self.gpus[a].stream, self.deadline(), "a receiving kernel")?;
        let [s, _] = self.read_status(a, &st)?;
        Ok(kernel_status(s))
    }
}

/// One row of `chatty bench messaging`.
#[derive(Clone, Debug, Serialize)]
pub struct MessagingRow {
    /// What was measured ("pingpong", "rate", "flags").
    pub experiment: String,
    /// Between what ("gpu-gpu", "gpu-host").
    pub path: String,
    /// Who drives it ("kernel", "host", "raw").
    pub initiator: String,
    /// Message bytes (0 for flags).
    pub bytes: u64,
    /// Round trips or messages timed.
    pub count: u64,
    /// Microseconds per round trip (ping-pong, flags).
    pub round_trip_us: Option<f64>,
    /// Bytes both ways over the round trip time, GB/s.
    pub bandwidth_gbs: Option<f64>,
    /// Messages per second (rate).
    pub messages_per_s: Option<f64>,
    /// Warp-aggregated posting (rate).
    pub aggregate: Option<bool>,
}
