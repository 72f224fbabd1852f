//! The facts of an engine's Prometheus metrics (their names, kinds and labels) and of its
//! limit on requests at once.

/// How a Prometheus series is read: a gauge is a level (read as it is), a counter only
/// rises (read as its increase over the trial: a level would be everything since the server
/// started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A level: running requests, KV use, a gauge of the last retraction.
    Gauge,
    /// Cumulative since the server started: read as its increase.
    Counter,
}

/// One series a benchmark reads: its name and how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    /// The sample name as served (`vllm:num_preemptions_total`).
    pub name: &'static str,
    /// Gauge or counter.
    pub kind: MetricKind,
}

/// What a label of an engine's series says about the series that carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelRole {
    /// Each value is a separate part of the server, its own requests (vLLM's `engine`,
    /// SGLang's `dp_rank`): the parts are summed (KV use: the fullest part).
    Part,
    /// Each value is a rank that repeats another's view of the same requests (SGLang's
    /// `tp_rank`, `pp_rank`, `moe_ep_rank` within one `dp_rank`): one is read, the lowest.
    Replica,
    /// A breakdown of a total the engine also serves with this label empty (SGLang's
    /// `priority` with `--enable-priority-scheduling`): only the empty value is read.
    Breakdown,
}

/// An engine's Prometheus metrics: where, how they are turned on, the names of the series a
/// benchmark reads (running, waiting and KV use are gauges; preemptions say their kind), and
/// what the labels say (a series served twice with the same name and labels is one series,
/// not two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsFacts {
    /// The scrape path.
    pub path: &'static str,
    /// The server flag that turns the endpoint on, where it is off by default.
    pub enable: Option<&'static str>,
    /// What else must be set for the running/waiting/KV series to be served, where the
    /// endpoint answers without them by default (TensorRT-LLM's `enable_iter_perf_stats`).
    pub series_need: Option<&'static str>,
    /// When the engine updates them, where it is not continuously (for the docs and the
    /// block-start check).
    pub updated: Option<&'static str>,
    /// A series the engine writes only once a request has finished, where none of its series
    /// has a sample before one has (TensorRT-LLM: its collector records at a request's end,
    /// and prometheus_client writes no family without samples). Without a sample of it the
    /// endpoint cannot be judged yet: a freshly started server has served no request.
    pub written_on_finish: Option<&'static str>,
    /// Requests running (a gauge).
    pub running: &'static str,
    /// Requests waiting (a gauge).
    pub waiting: &'static str,
    /// KV-cache use, 0–1 (a gauge), where the engine reports it.
    pub kv_usage: Option<&'static str>,
    /// Preemptions, where the engine reports them.
    pub preemptions: Option<Series>,
    /// Labels that tell parts, replicas and breakdowns apart; any other label is part of a
    /// series' identity (series that differ in it are summed).
    pub labels: &'static [(&'static str, LabelRole)],
}

/// Where an engine says how many requests it takes at once, and what happens beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConcurrencyLimit {
    /// `GET path`.
    pub path: &'static str,
    /// JSON pointer of the number.
    pub pointer: &'static str,
    /// The server flag that sets it.
    pub flag: &'static str,
    /// A request beyond it fails (TGI); else it waits in the engine's queue.
    pub refuses: bool,
}
