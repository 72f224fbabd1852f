//! Options, child processes and the two kinds of measurement.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

#[derive(Debug, Clone)]
pub(crate) struct Opts {
    pub secs: f64,
    pub warmup: f64,
    pub conns: usize,
    pub tokens: u32,
    pub rounds: usize,
    pub server_cpu: String,
    pub client_cpu: String,
}

impl Opts {
    pub(crate) fn parse(args: &[String]) -> Opts {
        let mut o = Opts {
            secs: 3.0,
            warmup: 0.5,
            conns: 64,
            tokens: 2000,
            rounds: 5,
            server_cpu: "0".into(),
            client_cpu: "1".into(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = || it.next().cloned().unwrap_or_default();
            match a.as_str() {
                "--secs" => o.secs = val().parse().unwrap_or(o.secs),
                "--warmup" => o.warmup = val().parse().unwrap_or(o.warmup),
                "--conns" => o.conns = val().parse().unwrap_or(o.conns),
                "--tokens" => o.tokens = val().parse().unwrap_or(o.tokens),
                "--rounds" => o.rounds = val().parse().unwrap_or(o.rounds),
                "--server-cpu" => o.server_cpu = val(),
                "--client-cpu" => o.client_cpu = val(),
                _ => {} // `--bench` from cargo, and anything else
            }
        }
        o
    }

    fn client_args(&self) -> Vec<String> {
        [
            ("--secs", self.secs.to_string()),
            ("--warmup", self.warmup.to_string()),
            ("--conns", self.conns.to_string()),
            ("--tokens", self.tokens.to_string()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_owned(), v])
        .collect()
    }
}

/// This executable with `args`, under `taskset -c cpu` when taskset exists.
fn command(cpu: &str, args: &[String]) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let taskset = Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    let mut c = if taskset {
        let mut c = Command::new("taskset");
        c.arg("-c").arg(cpu).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::null());
    c
}

fn spawn(cpu: &str, args: &[String]) -> Child {
    command(cpu, args)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {args:?}: {e}"))
}

fn first_line(child: &mut Child) -> String {
    let out = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("child stdout"));
    let mut line = String::new();
    let _ = BufReader::new(out).read_line(&mut line);
    line.trim().to_owned()
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts a server in `mode`; returns it and its address.
fn server(mode: &str, o: &Opts) -> (Child, String) {
    let mut s = spawn(&o.server_cpu, &[mode.to_owned()]);
    let addr = first_line(&mut s);
    (s, addr)
}

fn client(addr: &str, o: &Opts) -> Child {
    let mut args = vec!["client".to_owned(), addr.to_owned()];
    args.extend(o.client_args());
    spawn(&o.client_cpu, &args)
}

/// Events per second from a client's `events=N secs=S` line.
fn rate(client: &mut Child) -> f64 {
    let line = first_line(client);
    let field = |k: &str| -> f64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("bad client output {line:?}"))
    };
    field("events=") / field("secs=")
}

/// (on-CPU ns, runnable-but-waiting ns) of all threads of `pid`.
fn sched_ns(pid: u32) -> (u64, u64) {
    let mut total = (0, 0);
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return total;
    };
    for t in tasks.flatten() {
        let stat = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
        let mut f = stat
            .split_whitespace()
            .map(|x| x.parse::<u64>().unwrap_or(0));
        total.0 += f.next().unwrap_or(0);
        total.1 += f.next().unwrap_or(0);
    }
    total
}

/// One measurement of one server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rate {
    pub events_per_s: f64,
    /// Share of the measurement the server spent on a CPU.
    pub on_cpu: f64,
    /// Share of the measurement the server was runnable but waited for its CPU.
    pub waited: f64,
}

/// One server alone on the server CPU.
pub(crate) fn one_core(mode: &str, o: &Opts) -> Rate {
    let (s, addr) = server(mode, o);
    let (t0, before) = (Instant::now(), sched_ns(s.id()));
    let mut c = client(&addr, o);
    let events_per_s = rate(&mut c);
    let (elapsed, after) = (t0.elapsed().as_nanos() as f64, sched_ns(s.id()));
    stop(c);
    stop(s);
    Rate {
        events_per_s,
        on_cpu: (after.0 - before.0) as f64 / elapsed,
        waited: (after.1 - before.1) as f64 / elapsed,
    }
}

/// Both servers at once on the server CPU; (bare, sim) events per second.
pub(crate) fn head_to_head(o: &Opts) -> (f64, f64) {
    let (bs, baddr) = server("serve-bare", o);
    let (ss, saddr) = server("serve-sim", o);
    let (mut bc, mut sc) = (client(&baddr, o), client(&saddr, o));
    let (b, s) = (rate(&mut bc), rate(&mut sc));
    for c in [bc, sc, bs, ss] {
        stop(c);
    }
    (b, s)
}

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub(crate) fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}
