//! What the benchmark programs share: the 1 GiB test field, running work on plain threads,
//! and the process's peak memory.
#![allow(dead_code)]

/// Shape of the 1 GiB float32 field of the I/O benchmarks (z, y, x: x varies fastest).
pub const FIELD_SHAPE: [u64; 3] = [1024, 1024, 256];

/// The 1 GiB field: a smooth function with noise in the low mantissa bits, in native byte
/// order (it compresses like simulation output).
pub fn field() -> Vec<u8> {
    let total = FIELD_SHAPE.iter().product::<u64>() as usize * 4;
    let mut data = vec![0u8; total];
    let mut state = 12345u32;
    for (i, v) in data.chunks_exact_mut(4).enumerate() {
        let z = (i % 256) as f32;
        let x = ((i / 256) % 1024) as f32;
        let y = (i / (256 * 1024)) as f32;
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        let value = (x * 0.01).sin() * (y * 0.013).cos() + z * 0.001 + (state >> 24) as f32 * 1e-6;
        v.copy_from_slice(&value.to_ne_bytes());
    }
    data
}

/// Runs `f(i)` for `i` in `0..n` on `threads` plain threads (item `i` on thread `i % threads`).
pub fn parallel(threads: usize, n: usize, f: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || (t..n).step_by(threads).for_each(f));
        }
    });
}

/// The process's peak resident memory (VmHWM) in KiB, 0 where it cannot be read.
pub fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
