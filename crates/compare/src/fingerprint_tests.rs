use super::*;

#[test]
fn flatten_names_leaves_by_path() {
    let v = serde_json::json!({
        "dataset": {"kind": "random", "input_tokens": 128},
        "args": ["--a", "1"],
        "gpus": [{"name": "H200"}],
        "seed": 1,
        "rate": null
    });
    let mut out = BTreeMap::new();
    flatten("w", &v, &mut out);
    assert_eq!(out["w.dataset.kind"], "random");
    assert_eq!(out["w.dataset.input_tokens"], "128");
    assert_eq!(out["w.args"], "[--a, 1]");
    assert_eq!(out["w.gpus[0].name"], "H200");
    assert_eq!(out["w.rate"], "none");
}

#[test]
fn node_count_and_each_nodes_hardware_are_compared() {
    use servebench_result::cluster::{AllocationRecord, ClusterRecord, NodeRecord};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../results/gpu-llamacpp-aa/20261130T153438Z-3469.json"
    );
    let one: RunResult =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("result");
    let host = one.host.clone().expect("host");
    let node = |rank: u32, cores: u32| NodeRecord {
        node: format!("n{}", rank + 1),
        node_rank: rank,
        host: servebench_result::HostInfo {
            cores,
            ..host.clone()
        },
        accelerators: one.accelerators.clone(),
    };
    let with_nodes = |nodes: Vec<NodeRecord>| {
        let mut r = one.clone();
        r.provenance.cluster = Some(ClusterRecord {
            scheduler: "slurm".into(),
            allocations: vec![AllocationRecord {
                job_id: "1".into(),
                job_name: None,
                partition: None,
                nodes: nodes.iter().map(|n| n.node.clone()).collect(),
                server_nodes: nodes.iter().map(|n| n.node.clone()).collect(),
                batch_script: None,
                node_info: nodes,
                recorded_at: String::new(),
            }],
        });
        r
    };
    let two = with_nodes(vec![node(0, 64), node(1, 64)]);
    let (d, _) = compare(&one, &two);
    assert!(
        d.iter()
            .any(|x| x.field == "nodes.count" && x.baseline == "1" && x.candidate == "2"),
        "{d:?}"
    );
    assert!(compare(&one, &one).0.is_empty());
    assert!(compare(&two, &two.clone()).0.is_empty());
    let other = with_nodes(vec![node(0, 64), node(1, 32)]);
    let (d, _) = compare(&two, &other);
    let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
    assert_eq!(fields, ["nodes[1].host.cores"], "{d:?}");
}

fn aa() -> RunResult {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../results/gpu-llamacpp-aa/20261130T153438Z-3469.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("result")
}

/// Issue 43: a re-run on a fresh lease of the same machine raised not-comparable because
/// MemTotal differed by 0.002% and the kernel's build string changed. Before this rule
/// both were differences.
#[test]
fn host_fields_that_cannot_change_a_result_are_no_difference() {
    let one = aa();
    let mut two = one.clone();
    let h = two.host.as_mut().expect("host");
    h.memory_bytes = (h.memory_bytes as f64 * 1.00002) as u64;
    h.kernel = "6.8.0-1024-gcp-build2".into();
    let mut base = one.clone();
    base.host.as_mut().expect("host").kernel = "6.8.0-1023-gcp".into();
    assert!(
        compare(&base, &two).0.is_empty(),
        "{:?}",
        compare(&base, &two).0
    );
    // Another kernel version, or a tenth less memory, is a difference.
    let mut other = two.clone();
    other.host.as_mut().expect("host").kernel = "6.9.1-1".into();
    other.host.as_mut().expect("host").memory_bytes = h_mem(&one) / 10 * 9;
    let fields: Vec<String> = compare(&base, &other)
        .0
        .into_iter()
        .map(|d| d.field)
        .collect();
    assert_eq!(fields, ["host.kernel", "host.memory_bytes"]);
    assert_eq!(kernel_version("6.18.44-fc-v973-gpu"), "6.18.44");
    assert_eq!(kernel_version("unknown"), "");
    assert!(!same("host.kernel", "unknown", "other"));
}

fn h_mem(r: &RunResult) -> u64 {
    r.host.as_ref().expect("host").memory_bytes
}

fn probe(single: f64) -> servebench_result::HostProbe {
    servebench_result::HostProbe {
        version: 1,
        scope: "server-host".into(),
        single_thread: single,
        all_core: single * 1.9,
        threads: 2,
        memory_gbps: 9.0,
        cpu_mhz: None,
        steal_share: None,
        took_s: 0.5,
    }
}

/// Two hosts whose fingerprints read the same but run the probe 18% apart are told
/// apart; 3% apart (within the probe's repeatability) they are not; a run without the
/// probe never differs by it.
#[test]
fn the_host_probe_tells_identical_looking_hosts_apart() {
    let mut a = aa();
    a.host_probe = Some(probe(400.0));
    let mut slow = a.clone();
    slow.host_probe = Some(probe(400.0 * 0.82));
    let (d, _) = compare(&a, &slow);
    let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
    assert_eq!(
        fields,
        ["host_probe.single_thread", "host_probe.all_core"],
        "{d:?}"
    );
    assert!(d[0].candidate.contains("-18.0%"), "{}", d[0].candidate);
    let mut near = a.clone();
    near.host_probe = Some(probe(400.0 * 0.97));
    assert!(compare(&a, &near).0.is_empty());
    let mut none = a.clone();
    none.host_probe = None;
    let (d, notes) = compare(&none, &slow);
    assert!(d.is_empty(), "{d:?}");
    assert!(
        notes.iter().any(|n| n.contains("no host probe")),
        "{notes:?}"
    );
    // Probes that spread widely in each run (a loaded host): medians 12% apart are
    // within three standard errors of their difference, and do not split.
    let noisy = |centre: f64| {
        let mut r = a.clone();
        r.host_probe = None;
        for (i, s) in r.servers.iter_mut().enumerate() {
            s.host_probe = Some(probe(centre * [0.8, 0.9, 1.0, 1.1, 1.2][i % 5]));
        }
        r
    };
    assert!(compare(&noisy(400.0), &noisy(352.0)).0.is_empty());
    // The same medians from tight probes do split.
    let tight = |centre: f64| {
        let mut r = a.clone();
        for s in r.servers.iter_mut() {
            s.host_probe = Some(probe(centre));
        }
        r
    };
    assert_eq!(compare(&tight(400.0), &tight(352.0)).0.len(), 2);
    // The median over the run's probes: one slow block does not move it.
    let mut blocks = a.clone();
    for (i, s) in blocks.servers.iter_mut().enumerate() {
        s.host_probe = Some(probe(if i == 0 { 200.0 } else { 401.0 }));
    }
    assert!(
        compare(&a, &blocks).0.is_empty(),
        "{:?}",
        compare(&a, &blocks).0
    );
}

#[test]
fn short_keeps_the_first_line() {
    assert_eq!(short("abc"), "abc");
    assert_eq!(short("Name: sglang\nVersion: 1"), "Name: sglang…");
}

mod host_only {
    use super::*;

    /// Every host-only field of the spec hash is left out of the fingerprint too: the two
    /// rules of what a run measures agree (issue 41: `target.base_url` made an import and a
    /// run of the same command "not comparable" although their hashes ignore it).
    #[test]
    fn the_fingerprint_leaves_out_the_hash_s_host_only_fields() {
        assert_eq!(
            servebench_spec::hash::HOST_ONLY_FIELDS,
            [
                "/spec/server/working_dir",
                "/spec/target/base_url",
                "/spec/target/tls/ca_file"
            ],
            "a new host-only field of the hash: leave it out of `leaves` too"
        );
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../results/gpu-llamacpp-aa/20261130T153438Z-3469.json"
        );
        let one: RunResult =
            serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("result");
        let mut v = serde_json::to_value(&one).expect("json");
        let spec = &mut v["spec"]["spec"];
        spec["target"]["base_url"] = "http://10.1.2.3:9999/v1".into();
        spec["target"]["tls"] = serde_json::json!({"ca_file": "/other/ca.pem"});
        spec["server"]["working_dir"] = "/other/dir".into();
        let moved: RunResult = serde_json::from_value(v).expect("a result");
        let (d, _) = compare(&one, &moved);
        assert!(d.is_empty(), "host-only fields are no difference: {d:?}");
        // …while the rest of the target still counts.
        let mut v = serde_json::to_value(&one).expect("json");
        v["spec"]["spec"]["target"]["model"] = "another-model".into();
        let other: RunResult = serde_json::from_value(v).expect("a result");
        assert_eq!(compare(&one, &other).0.len(), 1);
    }
}
