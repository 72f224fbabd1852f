//! The host probe's repeatability (docs/statistics-measured.md, "Host probe"): run it N
//! times back to back on this host and print each run's figures as a JSON line, then the
//! coefficient of variation and the largest relative distance from the median of each.
//!
//!     cargo run --release -p servebench-runner --example host_probe -- 20

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let mut figures: [Vec<f64>; 3] = Default::default();
    for _ in 0..n {
        let p = servebench_runner::hostprobe::run(true);
        println!("{}", serde_json::to_string(&p).unwrap_or_default());
        figures[0].push(p.single_thread);
        figures[1].push(p.all_core);
        figures[2].push(p.memory_gbps);
    }
    for (name, v) in ["single_thread", "all_core", "memory_gbps"]
        .iter()
        .zip(&figures)
    {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1).max(1) as f64)
            .sqrt();
        let mut s = v.clone();
        s.sort_by(f64::total_cmp);
        let med = s[s.len() / 2];
        let far = v.iter().map(|x| (x / med - 1.0).abs()).fold(0.0, f64::max);
        println!(
            "{name}: mean {mean:.2} cv {:.1}% median {med:.2} min {:.2} max {:.2} largest distance from the median {:.1}%",
            sd / mean * 100.0,
            s[0],
            s[s.len() - 1],
            far * 100.0
        );
    }
}
