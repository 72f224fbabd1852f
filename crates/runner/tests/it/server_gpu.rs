//! `nvidia-smi` output captured on an H200, and the stop's wait for GPU memory through a fake
//! `nvidia-smi` that plays those captures back.

use crate::server_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use servebench_runner::gpu::{
    ComputeApp, GpuError, detect_accelerators, detect_accelerators_with, nvidia_smi,
    parse_compute_apps, parse_cuda_version, parse_driver_version, parse_query_gpu,
};
use servebench_runner::server::{GpuRelease, StopOptions, start, stop, stop_with};
use server_support::{fake_launch, fixture};

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("nvidia-smi-h200/{name}"))).unwrap()
}

#[test]
fn h200_query_gpu_with_units_and_extra_columns() {
    let gpus = parse_query_gpu(&read("query-gpu.csv")).unwrap();
    assert_eq!(gpus.len(), 1);
    let g = &gpus[0];
    assert_eq!(g.index, 0);
    assert_eq!(g.name, "NVIDIA H200");
    assert_eq!(g.memory_total_mib, 143_771);
    assert_eq!(g.driver_version, "580.159.04");
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-00000000-1111-2222-3333-444444444444")
    );
    assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:00:06.0"));
    assert_eq!(g.compute_cap.as_deref(), Some("9.0"));
    assert_eq!(g.cuda_version, None);
}

#[test]
fn h200_query_gpu_without_units() {
    let csv = "index, name, uuid, memory.total [MiB], driver_version\n\
               0, NVIDIA H200, GPU-a, 143771, 580.159.04\n\
               1, NVIDIA H200, [N/A], 143771, 580.159.04\n";
    let gpus = parse_query_gpu(csv).unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[1].index, 1);
    assert_eq!(gpus[1].uuid, None);
    assert_eq!(gpus[1].memory_total_mib, 143_771);
}

#[test]
fn cuda_and_driver_version_from_q() {
    let q = read("nvidia-smi-q.txt");
    assert_eq!(parse_cuda_version(&q).as_deref(), Some("13.0"));
    assert_eq!(parse_driver_version(&q).as_deref(), Some("580.159.04"));
    assert_eq!(parse_cuda_version("no such line"), None);
}

#[test]
fn compute_apps_busy_and_idle() {
    let busy = parse_compute_apps(&read("compute-apps-busy.csv")).unwrap();
    assert_eq!(
        busy,
        [ComputeApp {
            pid: 429,
            process_name: Some("python3".to_owned()),
            used_mib: Some(8148),
        }]
    );
    assert!(
        parse_compute_apps(&read("compute-apps-idle.csv"))
            .unwrap()
            .is_empty()
    );
    // nounits, no process name, and a driver that cannot say the memory.
    let apps = parse_compute_apps("pid, used_gpu_memory [MiB]\n429, 8148\n430, [N/A]\n").unwrap();
    assert_eq!(apps[0].used_mib, Some(8148));
    assert_eq!(apps[1].used_mib, None);
    assert_eq!(apps[1].process_name, None);
}

#[test]
fn h200_outputs_of_the_exact_queries_servebench_sends() {
    let gpus = parse_query_gpu(&read("query-gpu-nounits.csv")).unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name, "NVIDIA H200");
    assert_eq!(gpus[0].memory_total_mib, 143_771);
    assert_eq!(gpus[0].driver_version, "580.159.04");
    assert_eq!(gpus[0].compute_cap.as_deref(), Some("9.0"));
    let busy = parse_compute_apps(&read("compute-apps-busy-nounits.csv")).unwrap();
    assert_eq!(busy.len(), 1);
    assert_eq!((busy[0].pid, busy[0].used_mib), (422, Some(1542)));
    assert!(
        parse_compute_apps(&read("compute-apps-idle-nounits.csv"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn malformed_output_is_an_error_with_its_line() {
    let e = parse_compute_apps("pid, used_gpu_memory [MiB]\n429\n").unwrap_err();
    assert!(matches!(e, GpuError::Parse { line: 2, .. }), "{e:?}");
    let e = parse_compute_apps("pid, used_gpu_memory [MiB]\nabc, 1 MiB\n").unwrap_err();
    assert!(
        e.to_string().contains("`pid` is `abc`, not a whole number"),
        "{e}"
    );
    let e = parse_query_gpu("").unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = parse_query_gpu("index, name\n0, x\n").unwrap_err();
    assert!(e.to_string().contains("no `memory.total` column"), "{e}");
}

#[test]
fn no_nvidia_smi_means_no_accelerators() {
    if nvidia_smi().is_none() {
        assert_eq!(detect_accelerators(), None);
    }
}

/// Writes an `nvidia-smi` into `dir` that prints the fixtures; `--query-compute-apps` lists
/// the pid in `dir/server.pid` as holding 8148 MiB for its first `busy_calls` calls.
fn fake_nvidia_smi(dir: &Path, busy_calls: u32) -> PathBuf {
    let fix = fixture("nvidia-smi-h200");
    let script = format!(
        r#"#!/bin/sh
D='{dir}'
F='{fix}'
case "$*" in
  *--query-gpu=*) cat "$F/query-gpu.csv" ;;
  -q) cat "$F/nvidia-smi-q.txt" ;;
  *--query-compute-apps=*)
    n=$(cat "$D/calls" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$D/calls"
    echo "pid, process_name, used_gpu_memory [MiB]"
    echo "1, Xorg, 4 MiB"
    if [ "$n" -le {busy_calls} ]; then echo "$(cat "$D/server.pid"), python3, 8148 MiB"; fi ;;
  *) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac
"#,
        dir = dir.display(),
        fix = fix.display()
    );
    let path = dir.join("nvidia-smi");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn detect_through_a_fake_nvidia_smi() {
    let dir = tempfile::tempdir().unwrap();
    let smi = fake_nvidia_smi(dir.path(), 0);
    let gpus = detect_accelerators_with(&smi).unwrap();
    assert_eq!(gpus[0].name, "NVIDIA H200");
    assert_eq!(gpus[0].cuda_version.as_deref(), Some("13.0"));

    let broken = dir.path().join("broken-nvidia-smi");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n",
    )
    .unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = detect_accelerators_with(&broken).unwrap_err();
    assert!(matches!(e, GpuError::Failed { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("couldn't communicate with the NVIDIA driver"),
        "{e}"
    );
}

async fn stop_with_fake_smi(busy_calls: u32, gpu_wait: Duration) -> (GpuRelease, String) {
    let dir = tempfile::tempdir().unwrap();
    let smi = fake_nvidia_smi(dir.path(), busy_calls);
    let launch = fake_launch(dir.path(), &[], Duration::from_secs(20));
    let server = start(&launch).await.unwrap();
    std::fs::write(dir.path().join("server.pid"), server.pid().to_string()).unwrap();
    let opts = StopOptions {
        nvidia_smi: Some(smi),
        gpu_wait,
        ..StopOptions::default()
    };
    let report = stop_with(server, &opts).await;
    let log = std::fs::read_to_string(&launch.log_path).unwrap();
    (report.gpu, log)
}

#[tokio::test]
async fn stop_waits_until_the_group_releases_gpu_memory() {
    // Busy before the signal and at the first poll after it, idle from the next poll on.
    let (gpu, log) = stop_with_fake_smi(2, Duration::from_secs(20)).await;
    let GpuRelease::Released { after_s, held_mib } = gpu else {
        panic!("expected Released, got {gpu:?}");
    };
    assert_eq!(held_mib, 8148);
    assert!(after_s > 0.0);
    assert!(
        log.contains("stop: GPU memory: 8148 MiB released after"),
        "{log}"
    );
}

#[tokio::test]
async fn stop_reports_gpu_memory_still_held() {
    let (gpu, log) = stop_with_fake_smi(u32::MAX, Duration::from_millis(600)).await;
    let GpuRelease::StillHeld { pids, used_mib, .. } = &gpu else {
        panic!("expected StillHeld, got {gpu:?}");
    };
    assert_eq!(pids.len(), 1);
    assert_eq!(*used_mib, 8148);
    assert!(log.contains("8148 MiB still held by"), "{log}");
}

#[tokio::test]
async fn a_server_holding_no_gpu_memory_is_not_waited_for() {
    let (gpu, _) = stop_with_fake_smi(0, Duration::from_secs(20)).await;
    assert_eq!(gpu, GpuRelease::NoneHeld);
}

// On a GPU host: `cargo test -p servebench-runner --test it server_gpu -- --ignored`.

#[test]
#[ignore = "needs an NVIDIA GPU and nvidia-smi"]
fn real_nvidia_smi_is_read() {
    let gpus = detect_accelerators().expect("nvidia-smi on PATH answers");
    assert!(!gpus.is_empty());
    for g in &gpus {
        assert!(g.name.starts_with("NVIDIA"), "{g:?}");
        assert!(g.memory_total_mib > 1024, "{g:?}");
        assert!(g.cuda_version.is_some(), "{g:?}");
    }
}

#[tokio::test]
#[ignore = "needs an NVIDIA GPU, its driver's libcuda.so.1 and nvidia-smi"]
async fn real_gpu_memory_is_released_after_stop() {
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(dir.path(), &["--gpu-mib", "2048"], Duration::from_secs(60));
    let server = start(&launch).await.unwrap();
    let report = stop(server).await;
    let log = std::fs::read_to_string(&launch.log_path).unwrap();
    let GpuRelease::Released { held_mib, after_s } = report.gpu else {
        panic!("expected Released, got {report:?}\n{log}");
    };
    assert!(held_mib >= 2048, "{report:?}");
    assert!(after_s >= report.exited_after_s.unwrap(), "{report:?}");
    assert!(report.is_clean(), "{report:?}");
}
