//! `flashlab serve` with real clients (issue 30): qemu-img, qemu-io and nbdcopy; fio's nbd
//! engine with crc32c verification, random and sequential, at queue depths 1, 8 and 32, on
//! every registered FTL; ext4 made, written through fuse2fs, read back and checked with
//! e2fsck over nbdfuse on pagemap, kast and part-ftl. The binary runs as users run it; the
//! tools are Debian's (scripts/test.sh installs them).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod nbd_support;
use nbd_support::have_tool;

#[path = "../../sim/tests/small_device/mod.rs"]
mod small_device;

/// A running `flashlab serve` on a Unix socket in a temporary directory.
pub struct Served {
    child: Option<Child>,
    pub socket: PathBuf,
    pub image: PathBuf,
    pub log: PathBuf,
    pub json: PathBuf,
}

impl Served {
    /// Starts `flashlab serve` on `image` with `extra` arguments and waits for its socket.
    pub fn start(dir: &Path, image: &Path, extra: &[String]) -> Served {
        let socket = dir.join("nbd.sock");
        let log = dir.join(format!(
            "serve-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let json = dir.join("report.json");
        let _ = std::fs::remove_file(&json);
        let child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .arg("serve")
            .arg("--image")
            .arg(image)
            .arg("--listen")
            .arg(format!("unix:{}", socket.display()))
            .arg("--json")
            .arg(&json)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("flashlab runs");
        let mut served = Served {
            child: Some(child),
            socket,
            image: image.to_path_buf(),
            log,
            json,
        };
        served.wait_listening();
        served
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if std::fs::read_to_string(&self.log)
                .unwrap_or_default()
                .contains("listening on")
            {
                return;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("flashlab serve exited ({status}):\n{}", self.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "serve did not start:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.socket.display())
    }

    /// Stops the server as a user does (SIGINT) and gives its JSON report.
    pub fn stop(mut self) -> serde_json::Value {
        let mut child = self.child.take().unwrap();
        signal(&child, "INT");
        let status = child.wait().unwrap();
        let log = self.log_text();
        assert!(status.success(), "serve ended with {status}:\n{log}");
        let text = std::fs::read_to_string(&self.json)
            .unwrap_or_else(|e| panic!("no report ({e}):\n{log}"));
        serde_json::from_str(&text).unwrap()
    }

    /// Kills the server with SIGKILL (a power cut).
    pub fn kill9(mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name} failed");
}

/// Runs a command, failing the test with its output when it fails.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `--device` and `--set` arguments of `ftl`'s small set-up.
pub fn set_up_args(ftl: &str, more: &[&str]) -> Vec<String> {
    let (preset, sets) = small_device::set_up(ftl);
    let mut args = vec!["--device".to_string(), preset.to_string()];
    for s in sets.iter().map(String::as_str).chain(more.iter().copied()) {
        args.push("--set".into());
        args.push(s.to_string());
    }
    args
}

fn tools(list: &[(&str, &str)]) -> bool {
    list.iter().all(|(tool, package)| have_tool(tool, package))
}

/// fio's nbd engine: random and sequential writes verified with crc32c at queue depths 1, 8
/// and 32, each job on its own part of the export (stonewalled: one after the other).
fn fio_verify(served: &Served, size_bytes: u64) -> String {
    let region = size_bytes / 6 / 4096 * 4096;
    assert!(region >= 16 * 1024, "export too small: {size_bytes}");
    let mut job = format!(
        "[global]\nioengine=nbd\nuri={}\nbs=4k\nverify=crc32c\ndo_verify=1\nverify_fatal=1\n\
         size={region}\nverify_state_save=0\n",
        served.uri()
    );
    for (i, (rw, qd)) in [
        ("randwrite", 1),
        ("randwrite", 8),
        ("randwrite", 32),
        ("write", 1),
        ("write", 8),
        ("write", 32),
    ]
    .iter()
    .enumerate()
    {
        job.push_str(&format!(
            "[{rw}-qd{qd}]\nstonewall\nrw={rw}\niodepth={qd}\noffset={}\n",
            region * i as u64
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("verify.fio");
    std::fs::write(&file, job).unwrap();
    let out = run(Command::new("fio")
        .arg("--output-format=normal")
        .arg(&file)
        .current_dir(dir.path()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn export_size(served: &Served) -> u64 {
    let out = run(Command::new("nbdinfo").arg("--size").arg(served.uri()));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn fio_verifies_on_every_ftl() {
    if !tools(&[("fio", "fio"), ("nbdinfo", "libnbd-bin")]) {
        return;
    }
    for &(ftl, ..) in small_device::SET_UPS {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("flash.img");
        let served = Served::start(dir.path(), &image, &set_up_args(ftl, &[]));
        let size = export_size(&served);
        let out = fio_verify(&served, size);
        assert!(!out.contains("verify: bad"), "{ftl}: {out}");
        let report = served.stop();
        let data = &report["workload"]["data"];
        assert_eq!(data["missing_sectors"], 0, "{ftl}: {report}");
        assert!(
            report["host"]["write"]["count"].as_u64().unwrap() > 0,
            "{ftl}: nothing written: {report}"
        );
    }
}

#[test]
fn qemu_and_nbdcopy_read_and_write() {
    if !tools(&[
        ("qemu-img", "qemu-utils"),
        ("qemu-io", "qemu-utils"),
        ("nbdcopy", "libnbd-bin"),
    ]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("flash.img");
    let served = Served::start(dir.path(), &image, &set_up_args("pagemap", &[]));
    let info = run(Command::new("qemu-img")
        .args(["info", "--output=json"])
        .arg(served.uri()));
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    let size = info["virtual-size"].as_u64().unwrap();
    assert_eq!(size, export_size(&served));
    let io = |cmd: &str| {
        run(Command::new("qemu-io")
            .args(["-f", "raw", "-c", cmd])
            .arg(served.uri()))
    };
    io("write -P 0xa5 0 1M");
    io("write -f -P 0x3c 1M 64k");
    io("read -P 0xa5 0 1M");
    io("read -P 0x3c 1M 64k");
    io("write -z 512k 64k");
    io("read -P 0 512k 64k");
    let wrong = Command::new("qemu-io")
        .args(["-f", "raw", "-c", "read -P 0x11 0 4k"])
        .arg(served.uri())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&wrong.stdout);
    assert!(text.contains("Pattern verification failed"), "{text}");
    // nbdcopy: a random file up and back, byte for byte.
    let up = dir.path().join("up.bin");
    let down = dir.path().join("down.bin");
    let bytes: Vec<u8> = (0..size as usize)
        .map(|i| ((i * 2654435761usize) >> 13) as u8)
        .collect();
    std::fs::write(&up, &bytes).unwrap();
    run(Command::new("nbdcopy").arg(&up).arg(served.uri()));
    run(Command::new("nbdcopy").arg(served.uri()).arg(&down));
    assert!(
        std::fs::read(&down).unwrap() == bytes,
        "nbdcopy round trip differs"
    );
    let report = served.stop();
    assert!(report["flash"].is_object(), "{report}");
}

fn mounted(path: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let p = path.display().to_string();
    mounts
        .lines()
        .any(|l| l.split(' ').nth(1) == Some(p.as_str()))
}

/// Mounts ext4 image `disk` on `dir` with fuse2fs in the foreground (a child we can wait for).
fn mount_ext4(disk: &Path, dir: &Path, mode: &str) -> Child {
    let mut child = Command::new("fuse2fs")
        .arg(disk)
        .arg(dir)
        .args(["-f", "-o", &format!("{mode},fakeroot")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !mounted(dir) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("fuse2fs {mode} ended ({status}) before mounting");
        }
        assert!(Instant::now() < deadline, "fuse2fs did not mount");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// Unmounts a FUSE mount (retrying while busy) and waits for its daemon to end.
fn unmount(dir: &Path, daemon: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while mounted(dir) {
        let _ = Command::new("fusermount").arg("-u").arg(dir).status();
        if !mounted(dir) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "cannot unmount {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = daemon.wait();
}

/// Mounts the export as a file with nbdfuse, makes ext4 on it, writes files through
/// fuse2fs, unmounts, checks with `e2fsck -fn`, mounts again read-only and reads them back.
fn ext4_round_trip(ftl: &str, more: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("flash.img");
    let served = Served::start(dir.path(), &image, &set_up_args(ftl, more));
    let fuse = dir.path().join("nbd");
    let fs = dir.path().join("fs");
    std::fs::create_dir_all(&fuse).unwrap();
    std::fs::create_dir_all(&fs).unwrap();
    let disk = fuse.join("disk");
    let mut nbdfuse = expose(&served, &disk);
    run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&disk));
    let mut fuse2fs = mount_ext4(&disk, &fs, "rw");
    let mut files = Vec::new();
    for i in 0..6usize {
        let len = 1000 + i * 37_000;
        let bytes: Vec<u8> = (0..len).map(|j| (j * 31 + i * 7) as u8).collect();
        let name = format!("file{i}.bin");
        std::fs::create_dir_all(fs.join("sub")).unwrap();
        std::fs::write(fs.join("sub").join(&name), &bytes).unwrap();
        files.push((name, bytes));
    }
    unmount(&fs, &mut fuse2fs);
    // A new nbdfuse mount: what follows reads the device, not the kernel's cache of the file.
    unmount(&fuse, &mut nbdfuse);
    let mut nbdfuse = expose(&served, &disk);
    let fsck = run(Command::new("e2fsck").arg("-fn").arg(&disk));
    let text = String::from_utf8_lossy(&fsck.stdout);
    assert!(
        text.contains("7/") || text.contains("files"),
        "{ftl}: {text}"
    );
    let mut fuse2fs = mount_ext4(&disk, &fs, "ro");
    for (name, bytes) in &files {
        let back = std::fs::read(fs.join("sub").join(name)).unwrap();
        assert!(&back == bytes, "{ftl}: {name} read back differs");
    }
    unmount(&fs, &mut fuse2fs);
    unmount(&fuse, &mut nbdfuse);
    let report = served.stop();
    assert_eq!(report["workload"]["data"]["missing_sectors"], 0, "{ftl}");
    assert!(
        report["host"]["read"]["count"].as_u64().unwrap() > 0,
        "{ftl}: nothing was read from the device"
    );
}

/// The served export as the file `disk` (nbdfuse), once it exists.
fn expose(served: &Served, disk: &Path) -> Child {
    let child = Command::new("nbdfuse")
        .arg(disk)
        .arg("--unix")
        .arg(&served.socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !disk.exists() {
        assert!(Instant::now() < deadline, "nbdfuse did not expose the disk");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

#[test]
fn ext4_on_pagemap_kast_and_part_ftl() {
    if !tools(&[
        ("nbdfuse", "libnbd-bin"),
        ("fuse2fs", "fuse2fs"),
        ("mkfs.ext4", "e2fsprogs"),
        ("e2fsck", "e2fsprogs"),
        ("fusermount", "fuse3"),
    ]) {
        return;
    }
    if !Path::new("/dev/fuse").exists() {
        panic!("/dev/fuse is missing: the ext4 test needs FUSE (set FLASHLAB_SKIP_CLIENT_TESTS=1 to skip)");
    }
    ext4_round_trip("pagemap", &["geometry.blocks_per_plane=64"]);
    ext4_round_trip("kast", &["geometry.blocks_per_plane=1024"]);
    ext4_round_trip("part-ftl", &[]);
}

/// fio's mean latency of a QD1 4 KiB random-read job (after a fill) on `--clock real`, and
/// the simulated mean of the same requests replayed by `flashlab run` from the server's
/// `--record` (closed loop, queue depth 1): they agree within 10% on `device`.
fn real_clock_matches_replay(device: &str, sets: &[&str]) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("flash.img");
    let record = dir.path().join("served.iolog");
    let mut args = vec![
        "--device".to_string(),
        device.to_string(),
        "--clock".into(),
        "real".into(),
        "--record".into(),
        record.display().to_string(),
    ];
    for s in sets {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    let served = Served::start(dir.path(), &image, &args);
    let region = 8 << 20;
    let job = format!(
        "[global]\nioengine=nbd\nuri={}\nbs=4k\nsize={region}\n\
         [fill]\nrw=write\niodepth=1\n\
         [randread]\nstonewall\nrw=randread\niodepth=1\nnumber_ios=3000\nrandrepeat=1\n",
        served.uri()
    );
    let file = dir.path().join("qd1.fio");
    std::fs::write(&file, job).unwrap();
    let out = run(Command::new("fio")
        .args(["--output-format=json"])
        .arg(&file)
        .current_dir(dir.path()));
    let fio = fio_output(&out.stdout).expect("fio's JSON");
    let job = fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "randread")
        .unwrap();
    let fio_mean = job["read"]["lat_ns"]["mean"].as_f64().unwrap();
    let served_report = served.stop();
    let served_mean = served_report["host"]["read"]["latency_ns"]["mean"]
        .as_f64()
        .unwrap();
    let replay_json = dir.path().join("replay.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    cmd.args(["run", "--quiet", "--device", device, "--trace"])
        .arg(&record)
        .args([
            "--set",
            "trace.replay=closed",
            "--set",
            "trace.queue_depth=1",
        ])
        .arg("--json")
        .arg(&replay_json);
    for s in sets {
        cmd.args(["--set", s]);
    }
    run(&mut cmd);
    let replay: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&replay_json).unwrap()).unwrap();
    // The fill writes; the replay's reads are the random reads alone.
    let replay_mean = replay["host"]["read"]["latency_ns"]["mean"]
        .as_f64()
        .unwrap();
    (fio_mean, served_mean, replay_mean)
}

/// `--clock real` on two of the papers' boards. The paced clock does not change the
/// simulation: the served requests' simulated mean equals the replay's within 2%. A client
/// sees the simulated latency plus the transport's: three thread wake-ups on this path (the
/// connection's reader, its writer, fio), about 100 us on a 2-core machine, which pacing cannot
/// hide. On the `mt-board` (about 2.7 ms per 4 KiB read over its UART) fio's mean is within 10%
/// of the replay's; on `cosmos` (about 250 us) the transport adds about 40%, so only the
/// overhead's bound is checked there.
#[test]
fn real_clock_latency_within_ten_percent_of_replay() {
    if !tools(&[("fio", "fio")]) {
        return;
    }
    for (device, within_ten_percent) in [("mt-board", true), ("cosmos", false)] {
        let sets: &[&str] = if device == "cosmos" {
            &["geometry.blocks_per_plane=64"]
        } else {
            &[]
        };
        let (fio, served, replay) = real_clock_matches_replay(device, sets);
        eprintln!(
            "{device}: fio mean {:.1} us, served (simulated) {:.1} us, replay {:.1} us",
            fio / 1e3,
            served / 1e3,
            replay / 1e3
        );
        let same = (served - replay).abs() / replay;
        assert!(
            same < 0.02,
            "{device}: served simulated mean {served:.0} ns differs from the replay's {replay:.0} ns by {:.1}%",
            same * 100.0
        );
        let transport = fio - served;
        assert!(
            (0.0..250_000.0).contains(&transport),
            "{device}: fio's mean {fio:.0} ns is {transport:.0} ns beyond the simulated {served:.0} ns"
        );
        let error = (fio - replay).abs() / replay;
        if within_ten_percent {
            assert!(
                error < 0.10,
                "{device}: fio's mean {fio:.0} ns is {:.1}% from the replay's {replay:.0} ns",
                error * 100.0
            );
        }
    }
}

/// Runs fio job `job` (text) in `dir`, giving its JSON output and whether it succeeded.
fn fio_json(dir: &Path, name: &str, job: &str, extra: &[&str]) -> (serde_json::Value, bool) {
    let file = dir.join(name);
    std::fs::write(&file, job).unwrap();
    let out = Command::new("fio")
        .arg("--output-format=json")
        .args(extra)
        .arg(&file)
        .current_dir(dir)
        .output()
        .unwrap();
    let json = fio_output(&out.stdout).unwrap_or(serde_json::Value::Null);
    (json, out.status.success())
}

/// fio's JSON output (the nbd engine prints a line before it).
fn fio_output(stdout: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(stdout);
    serde_json::from_str(&text[text.find('{')?..]).ok()
}

/// Power cuts: a sequential fio write job (QD 1, a flush every 16 writes, each round's
/// blocks filled with the round's own pattern) runs while the server is killed with SIGKILL at
/// a random moment; the server restarts on the image (recovery by the FTL's scan, whose state
/// must pass its invariant checks) and `fio --verify_only` checks every block whose last
/// flushed content is known: the round's flushed prefix and the older rounds' blocks beyond
/// what the round touched. The cut falls within the job: its duration is measured first.
fn crash_rounds(ftl: &str, rounds: usize, seed: u64) {
    use rand::{Rng, SeedableRng};
    const BS: u64 = 4096;
    const FLUSH_EVERY: u64 = 16;
    const MAX_BLOCKS: u64 = 2048;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("flash.img");
    let mut served = Served::start(dir.path(), &image, &set_up_args(ftl, &[]));
    // Half the export, at most 8 MiB (the demand-paged FTLs' set-up exports 100 MiB).
    let blocks = (export_size(&served) / 2 / BS).min(MAX_BLOCKS) / FLUSH_EVERY * FLUSH_EVERY;
    let uri = served.uri();
    let header = format!("[global]\nioengine=nbd\nuri={uri}\nbs={BS}\nrw=write\niodepth=1\n");
    let write_job = |round: usize| {
        format!(
            "{header}[round{round}]\nsize={}\nfsync={FLUSH_EVERY}\nverify=pattern\n\
             verify_pattern=0x{:08x}\ndo_verify=0\n",
            blocks * BS,
            0x5a00_0000 + round
        )
    };
    // Last flushed round per block (None: unknown, not checked).
    let mut known: Vec<Option<usize>> = vec![None; blocks as usize];
    let verify = |known: &[Option<usize>], served: &Served, round: usize| {
        let mut job = header.clone();
        let mut at = 0;
        let mut groups = 0;
        while at < known.len() {
            let Some(pattern) = known[at] else {
                at += 1;
                continue;
            };
            let end = (at..known.len())
                .find(|&i| known[i] != Some(pattern))
                .unwrap_or(known.len());
            job.push_str(&format!(
                "[check{groups}]\nstonewall\noffset={}\nsize={}\nverify=pattern\n\
                 verify_pattern=0x{:08x}\ndo_verify=1\n",
                at as u64 * BS,
                (end - at) as u64 * BS,
                0x5a00_0000 + pattern
            ));
            groups += 1;
            at = end;
        }
        if groups == 0 {
            return 0;
        }
        let (out, ok) = fio_json(dir.path(), "verify.fio", &job, &["--verify_only"]);
        let read: u64 = out["jobs"]
            .as_array()
            .map(|jobs| {
                jobs.iter()
                    .map(|j| j["read"]["io_bytes"].as_u64().unwrap_or(0))
                    .sum()
            })
            .unwrap_or(0);
        let expected = known.iter().filter(|k| k.is_some()).count() as u64 * BS;
        assert!(
            ok && read == expected,
            "{ftl} round {round}: a flushed block is damaged after recovery (read {read} of {expected} bytes):\n{out}\n{}",
            served.log_text()
        );
        expected / BS
    };
    let file = dir.path().join("write.fio");
    let started = Instant::now();
    std::fs::write(&file, write_job(0)).unwrap();
    run(Command::new("fio").arg(&file).current_dir(dir.path()));
    let job_ms = started.elapsed().as_millis() as u64;
    known.fill(Some(0));
    let mut checked = 0;
    for round in 1..=rounds {
        std::fs::write(&file, write_job(round)).unwrap();
        let fio = Command::new("fio")
            .arg("--output-format=json")
            .arg(&file)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(
            rng.random_range(job_ms / 20..job_ms * 9 / 10),
        ));
        served.kill9();
        let out = fio.wait_with_output().unwrap();
        let json = fio_output(&out.stdout).unwrap_or_else(|| {
            panic!(
                "{ftl} round {round}: fio printed no JSON: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        let acked = json["jobs"][0]["write"]["io_bytes"].as_u64().unwrap() / BS;
        // At QD 1 the flush after every 16th write completes before the next write is
        // sent: all but the last group of 16 acknowledged writes were flushed; the rest of
        // the acknowledged writes and the one in flight may or may not have landed.
        let flushed = (acked / FLUSH_EVERY).saturating_sub(1) * FLUSH_EVERY;
        for (i, k) in known.iter_mut().enumerate() {
            let i = i as u64;
            if i < flushed {
                *k = Some(round);
            } else if i <= acked {
                *k = None;
            }
        }
        served = Served::start(dir.path(), &image, &[]);
        assert!(
            served.log_text().contains("recovered:"),
            "{ftl}: {}",
            served.log_text()
        );
        checked += verify(&known, &served, round);
    }
    eprintln!(
        "{ftl}: {rounds} power cuts within a {job_ms} ms write job, {checked} flushed blocks checked in all"
    );
    served.stop();
}

#[test]
fn power_cuts_keep_every_flushed_block() {
    if !tools(&[("fio", "fio"), ("nbdinfo", "libnbd-bin")]) {
        return;
    }
    let recoverable: Vec<&'static str> = small_device::SET_UPS
        .iter()
        .map(|&(ftl, ..)| ftl)
        .filter(|&ftl| {
            let cfg = small_device::config(ftl, false);
            flashlab_sim::ftl::registry::build(&cfg)
                .map(|f| f.supports_recovery())
                .unwrap()
        })
        .collect();
    // Two FTLs at a time: a round mostly waits (for the kill point, the restart, fio).
    std::thread::scope(|scope| {
        for half in [0, 1] {
            let list = &recoverable;
            scope.spawn(move || {
                for &ftl in list.iter().skip(half).step_by(2) {
                    crash_rounds(ftl, 20, 30);
                }
            });
        }
    });
}
