//! Streaming under a budget on a real adapter (lavapipe in CI): a gallery of 64 KTX2 files on disk,
//! read by the IO workers level by level, made resident through GPU rebuilds, with the budget
//! changed 256 -> 48 -> 256 MiB during the run.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mipflow::Budget;
use mipflow::Category;
use mipflow::FrameTiming;
use mipflow::GpuContext;
use mipflow::PlanStatus;
use mipflow::ktx2::{EncodedTexture, write_ktx2};
use mipflow::{BudgetManager, ManagerConfig};
use mipflow::{StreamConfig, TextureHandle, TextureOptions, TextureSource};

const MIB: u64 = 1 << 20;
/// The manager's 1x1 RGBA8 fallback texture (drawn while nothing of a texture is resident).
const FALLBACK_BYTES: u64 = 4;

/// Writes `count` BC7 KTX2 files of `size`² with full chains. The blocks are arbitrary bytes
/// (every 16-byte pattern is a valid BC7 block): streaming does not look at the content, and this
/// keeps the test free of encoder time.
fn write_gallery(dir: &Path, count: u32, size: u32, zstd_every: u32) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..count)
        .map(|i| {
            let path = dir.join(format!("t{i:03}.ktx2"));
            // Some files are zstd-supercompressed, so both read paths stream.
            let z = (zstd_every > 0 && i % zstd_every == 0).then_some(3);
            write_texture(&path, size, size, i, z);
            path
        })
        .collect()
}

/// Writes one `w x h` BC7 KTX2 file with a full chain of arbitrary blocks.
fn write_texture(path: &Path, w: u32, h: u32, seed: u32, zstd: Option<i32>) {
    let levels = mipflow::low_level::full_mip_count(w, h);
    let tex = EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: w,
        height: h,
        levels: (0..levels)
            .map(|l| {
                let (lw, lh) = ((w >> l).max(1), (h >> l).max(1));
                let n = (lw.div_ceil(4) * lh.div_ceil(4) * 16) as usize;
                (0..n)
                    .map(|k| (k as u32 ^ seed.wrapping_mul(2_654_435_761)) as u8)
                    .collect()
            })
            .collect(),
        key_values: Vec::new(),
    };
    let mut f = std::fs::File::create(path).unwrap();
    write_ktx2(&mut f, &tex, zstd, "mipflow test").unwrap();
}

/// The budget manager with no render targets of its own (a game whose targets are fixed), fed
/// the same demand for every texture each frame.
struct Harness {
    m: BudgetManager,
    handles: Vec<TextureHandle>,
    budget: u64,
}

impl Harness {
    fn new(ctx: GpuContext, config: StreamConfig) -> Self {
        let mut mc = ManagerConfig::default();
        mc.stream = config;
        mc.render_targets = false;
        let mut h = Self {
            m: BudgetManager::with_context(ctx, mc),
            handles: Vec::new(),
            budget: 0,
        };
        // The manager's own baseline: its 1x1 fallback texture, made by its first frame.
        let _ = h.frame(64 * MIB, 0.0);
        h
    }

    /// Bytes of the streamed textures (the textures category less the 4-byte fallback).
    fn texture_bytes(&self) -> u64 {
        self.m.context().ledger().bytes(Category::Textures) - FALLBACK_BYTES
    }

    /// A harness streaming `files` (default options, registered under a 64 MiB budget).
    fn with_files(
        ctx: GpuContext,
        config: StreamConfig,
        files: &[PathBuf],
    ) -> (Self, Vec<TextureHandle>) {
        let mut h = Self::new(ctx, config);
        let handles = files
            .iter()
            .map(|f| h.add(f.clone(), TextureOptions::default(), 64 * MIB))
            .collect();
        (h, handles)
    }

    /// Registers the KTX2 file at `path` (under `budget`).
    fn add(&mut self, path: PathBuf, opts: TextureOptions, budget: u64) -> TextureHandle {
        self.set_budget(budget);
        let h = self
            .m
            .add_texture(TextureSource::Path(Arc::new(path)), opts)
            .unwrap();
        self.handles.push(h);
        h
    }

    fn set_budget(&mut self, budget: u64) {
        if budget != self.budget {
            self.m.set_budget(Budget::bytes(budget));
            self.budget = budget;
        }
    }

    /// One frame of the budget loop, as a game runs it (without drawing): every texture wants
    /// level `wanted`. Returns the ledger's peak inside the frame and the plan status.
    fn frame(&mut self, budget: u64, wanted: f32) -> (u64, PlanStatus) {
        self.set_budget(budget);
        for &h in &self.handles {
            self.m.add_demand(h, wanted, 50_000.0);
        }
        let plan = self.m.frame((1280, 720), FrameTiming::default()).unwrap();
        self.m.context().queue().submit([]);
        self.m.end_frame();
        (self.m.context().ledger().take_window_peak(), plan.status)
    }

    /// Every texture holds its whole chain, each level the file's, byte for byte.
    fn assert_whole_and_intact(&self, files: &[PathBuf], handles: &[TextureHandle]) {
        for (f, hd) in files.iter().zip(handles) {
            let info = mipflow::ktx2::read_info(f, &Default::default()).unwrap();
            let levels = TextureSource::Path(Arc::new(f.clone()))
                .read_levels(
                    &info,
                    0..info.levels.len() as u8,
                    &std::sync::atomic::AtomicBool::new(false),
                )
                .unwrap();
            let tex = self.m.streamer().resident_texture(*hd).unwrap();
            assert_eq!(tex.mip_level_count() as usize, levels.len());
            for (l, want) in levels.iter().enumerate() {
                let got = mipflow::low_level::read_level(self.m.context(), tex, l as u32).unwrap();
                assert!(got == *want, "{}: level {l} differs", f.display());
            }
        }
    }

    fn all_at(&self, level: u8) -> bool {
        self.m
            .streamer()
            .plan_textures()
            .iter()
            .filter(|p| p.level_count > 0)
            .all(|p| p.resident_level == level && !p.busy)
    }
}

#[test]
fn gallery_holds_budget_through_256_48_256_and_unloads_to_baseline() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-stream-{}", std::process::id()));
    // 64 textures of 1024² (1,398,128 bytes each at full residency, 85.3 MiB in all): more than
    // 48 MiB, less than 256 MiB.
    let files = write_gallery(&dir, 64, 1024, 4);
    let mut h = Harness::new(ctx, StreamConfig::default().with_deterministic(true));
    let baseline = h.m.context().ledger().snapshot();
    let mut handles = Vec::new();
    for f in &files {
        handles.push(h.add(f.clone(), TextureOptions::default(), 256 * MIB));
    }
    // Floors (32x32 down) resident at once: 64 x 1,392 bytes (the 32, 16, 8, 4, 2, 1 levels).
    assert_eq!(h.texture_bytes(), 64 * (64 + 16 + 4 + 1 + 1 + 1) * 16);
    h.m.context().ledger().take_window_peak();

    let full = 64 * 1_398_128u64;
    let mut converged_at = None;
    for i in 0..60 {
        let (peak, status) = h.frame(256 * MIB, 0.0);
        assert_eq!(status, PlanStatus::Ok);
        assert!(peak <= 256 * MIB, "frame {i}: {peak} over 256 MiB");
        if converged_at.is_none() && h.all_at(0) {
            converged_at = Some(i);
        }
    }
    let at = converged_at.expect("all wanted mips resident at 256 MiB");
    assert_eq!(h.texture_bytes(), full);
    println!("256 MiB: every texture at level 0 after {at} frames");

    // The budget drops to 48 MiB: the very first frame must already be within it.
    let mut first = true;
    for i in 0..60 {
        let (peak, status) = h.frame(48 * MIB, 0.0);
        assert_eq!(status, PlanStatus::Ok);
        assert!(
            peak <= 48 * MIB,
            "frame {i} after the drop: peak {peak} over 48 MiB (first frame: {first})"
        );
        first = false;
    }
    let used = h.m.context().ledger().total_bytes();
    assert!(used <= 48 * MIB);
    // Demand exceeds the budget: at least 90% of what the planner may use (budget - headroom)
    // holds textures.
    let limit = h.m.last_plan().limit;
    assert!(
        used * 10 >= limit * 9,
        "only {used} of {limit} bytes used at 48 MiB"
    );

    // Back to 256 MiB: converges to full residency again.
    let mut back = None;
    for i in 0..80 {
        let (peak, _) = h.frame(256 * MIB, 0.0);
        assert!(peak <= 256 * MIB);
        if back.is_none() && h.all_at(0) {
            back = Some(i);
        }
    }
    assert!(back.is_some(), "wanted mips converge again at 256 MiB");
    assert_eq!(h.texture_bytes(), full);

    // A steady view: nothing changes over 100 frames.
    let before: Vec<u8> =
        h.m.streamer()
            .plan_textures()
            .iter()
            .map(|p| p.resident_level)
            .collect();
    for _ in 0..100 {
        let (_, _) = h.frame(256 * MIB, 0.0);
    }
    let after: Vec<u8> =
        h.m.streamer()
            .plan_textures()
            .iter()
            .map(|p| p.resident_level)
            .collect();
    assert_eq!(before, after, "no texture changes in a steady view");

    // Unload: every category back to baseline, and the driver agrees.
    for handle in handles {
        assert!(h.m.remove_texture(handle));
        assert!(!h.m.remove_texture(handle), "a stale handle fails softly");
        assert!(h.m.texture_view(handle).is_none());
    }
    let _ = h.frame(256 * MIB, 0.0);
    h.m.context().queue().submit([]);
    h.m.context().wait_idle().unwrap();
    h.m.poll(); // releases the last staging charges
    let snap = h.m.context().ledger().snapshot();
    for c in Category::ALL {
        assert_eq!(
            snap.by_category.get(c).bytes,
            baseline.by_category.get(c).bytes,
            "{c:?}"
        );
        assert_eq!(
            snap.by_category.get(c).count,
            baseline.by_category.get(c).count,
            "{c:?}"
        );
    }
    assert!(h.m.context().take_uncaptured_errors().is_empty());
    h.m.clear();
    assert_eq!(
        h.m.context().ledger().total_bytes(),
        0,
        "{:?}",
        h.m.context().leak_report()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_level_keeps_the_texture_and_is_reported() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-corrupt-{}", std::process::id()));
    let files = write_gallery(&dir, 2, 256, 1);
    // Overwrite the end of the second file's level 0 (zstd, stored last) with garbage: the header
    // and the floor stay readable, level 0 fails to decompress.
    let f = &files[1];
    let mut bytes = std::fs::read(f).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n - 60..] {
        *b = 0xA5;
    }
    std::fs::write(f, bytes).unwrap();
    let mut h = Harness::new(ctx, StreamConfig::default().with_deterministic(true));
    for f in &files {
        h.add(f.clone(), TextureOptions::default(), 64 * MIB);
    }
    let mut errors = 0;
    for _ in 0..20 {
        let _ = h.frame(64 * MIB, 0.0);
        errors += h.m.streamer().frame_stats().io_errors;
    }
    let infos = h.m.streamer().texture_infos();
    assert_eq!(infos[0].resident_level, 0, "the good texture streams fully");
    assert!(
        infos[1].resident_level > 0,
        "the corrupt one keeps what it had"
    );
    assert!(
        infos[1]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("level 0")),
        "{:?}",
        infos[1].error
    );
    // Read once, then backed off (300 frames): not read again every frame.
    assert_eq!(errors, 1);
    assert!(h.m.context().take_uncaptured_errors().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file replaced after registration (a re-cook renames a new file over it, here one whose
/// longer metadata moves every level): the texture keeps what it has and reports why, as a
/// corrupt file does; its levels are not read from the new file at the old offsets and
/// uploaded as its own. The other texture streams on.
#[test]
fn a_file_replaced_after_registration_keeps_the_texture_and_is_reported() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-replaced-{}", std::process::id()));
    let files = write_gallery(&dir, 2, 256, 0);
    let mut h = Harness::new(ctx, StreamConfig::default().with_deterministic(true));
    for f in &files {
        h.add(f.clone(), TextureOptions::default(), 64 * MIB);
    }
    let floor = h.m.streamer().texture_infos()[1].resident_level;
    assert!(floor > 0, "registered at its floor");
    // The new file, with a key/value block of its own, renamed over the second one.
    let staged = dir.join("new.tmp");
    let levels = mipflow::low_level::full_mip_count(256, 256);
    let tex = EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: 256,
        height: 256,
        levels: (0..levels)
            .map(|l| vec![0x5A; ((256 >> l).max(4) / 4 * ((256 >> l).max(4) / 4) * 16) as usize])
            .collect(),
        key_values: vec![("recooked-by".into(), vec![b'x'; 100])],
    };
    let mut bytes = Vec::new();
    write_ktx2(&mut bytes, &tex, None, "another cook").unwrap();
    std::fs::write(&staged, bytes).unwrap();
    std::fs::rename(&staged, &files[1]).unwrap();
    let mut errors = 0;
    for _ in 0..20 {
        let _ = h.frame(64 * MIB, 0.0);
        errors += h.m.streamer().frame_stats().io_errors;
    }
    let infos = h.m.streamer().texture_infos();
    assert_eq!(
        infos[0].resident_level, 0,
        "the other texture streams fully"
    );
    assert_eq!(
        infos[1].resident_level, floor,
        "keeps its floor, nothing else"
    );
    assert!(
        infos[1]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("changed since it was registered")),
        "{:?}",
        infos[1].error
    );
    assert_eq!(errors, 1, "read once, then backed off");
    assert!(h.m.context().take_uncaptured_errors().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn npot_textures_start_only_at_block_aligned_levels() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-npot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut h = Harness::new(ctx, StreamConfig::default().with_deterministic(true));
    // (size, the floor the streamer must pick): 960x540 can only start at level 0 (480x270 is
    // not a multiple of 4), 200x120 at 0 or 1, 100x100 at 0 or 3 (12x12), 256x256 anywhere.
    let cases = [
        ((960, 540), 0u8),
        ((200, 120), 1),
        ((100, 100), 3),
        ((256, 256), 3),
    ];
    for (i, ((w, hh), floor)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("npot{i}.ktx2"));
        write_texture(&path, w, hh, i as u32, None);
        h.add(path, TextureOptions::default(), 64 * MIB);
        let p = h.m.streamer().plan_textures()[i];
        assert_eq!(
            (p.floor_level, p.resident_level),
            (floor, floor),
            "{w}x{hh}"
        );
    }
    // Every level wanted: each texture reaches level 0, never stopping at a level wgpu refuses.
    let mut seen = vec![Vec::new(); cases.len()];
    for _ in 0..20 {
        let (peak, _) = h.frame(64 * MIB, 0.0);
        assert!(peak <= 64 * MIB);
        for (i, p) in h.m.streamer().plan_textures().iter().enumerate() {
            if seen[i].last() != Some(&p.resident_level) {
                seen[i].push(p.resident_level);
            }
        }
    }
    assert_eq!(seen[0], vec![0], "960x540 is whole from the start");
    assert_eq!(seen[1], vec![1, 0]);
    assert_eq!(
        seen[2],
        vec![3, 0],
        "100x100 skips levels 1 and 2 (50x50, 25x25)"
    );
    assert_eq!(seen[3].first(), Some(&3));
    assert_eq!(seen[3].last(), Some(&0));
    for info in h.m.streamer().texture_infos() {
        assert_eq!(info.error, None, "{}", info.label);
        let full: u64 = (0..info.level_count)
            .map(|l| {
                let (w, hh) = ((info.width >> l).max(1), (info.height >> l).max(1));
                u64::from(w.div_ceil(4) * hh.div_ceil(4) * 16)
            })
            .sum();
        assert_eq!(info.resident_bytes, full, "{}", info.label);
    }
    assert!(h.m.context().take_uncaptured_errors().is_empty());

    // A chain with no level a BC7 texture can start at is refused with a clear error.
    let path = dir.join("odd.ktx2");
    write_texture(&path, 30, 30, 9, None);
    let err =
        h.m.add_texture(
            TextureSource::Path(Arc::new(path)),
            TextureOptions::default(),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("multiple of the 4x4 block"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Set in the child process of the out-of-memory tests.
#[cfg(target_os = "linux")]
const OOM_CHILD: &str = "MIPFLOW_OOM_CHILD";

/// The address space this process maps now (`VmSize`).
#[cfg(target_os = "linux")]
fn mapped_bytes() -> u64 {
    let kib: u64 = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// `setrlimit(RLIMIT_AS)`, what `ulimit -v` does: allocations past it fail, the driver's too.
#[cfg(target_os = "linux")]
fn set_address_space_limit(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct we pass; no memory is shared.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0);
}

/// In the child of an out-of-memory test, the GPU to run it on; None in a normal run, or with
/// no GPU (then the child says it skipped).
#[cfg(target_os = "linux")]
fn oom_child_gpu() -> Option<GpuContext> {
    std::env::var_os(OOM_CHILD)?;
    let ctx = common::gpu();
    if ctx.is_none() {
        println!("oom-result: skipped");
    }
    ctx
}

/// Runs this test binary on the test `child` alone with [`OOM_CHILD`] set and prints the text
/// after `oom-result: ` in its output; fails when the child fails (a panic, an abort). Does
/// nothing inside a child.
#[cfg(target_os = "linux")]
fn run_oom_child(child: &str) {
    if std::env::var_os(OOM_CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    // The test's full name in this binary: its module path less the crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::{child}");
    let out = std::process::Command::new(exe)
        .args(["--exact", name.as_str(), "--nocapture", "--test-threads=1"])
        .env(OOM_CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the child failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("oom-result: ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no result from the child:\n{stdout}\n{stderr}"));
    eprintln!("child: {line}");
    if line == "skipped" {
        eprintln!("no GPU: the out-of-memory test did not run");
    }
}

/// A real out-of-memory from the driver, through the streamer. The test re-runs this binary on
/// `oom_child` alone: the child limits its own address space (`setrlimit(RLIMIT_AS)`, what
/// `ulimit -v` does) once set up, so lavapipe's memory allocations fail with
/// `VK_ERROR_OUT_OF_DEVICE_MEMORY` while the budget still says 1 GiB. A crash of any kind
/// (panic, abort) fails the child and so this test.
#[cfg(target_os = "linux")]
#[test]
fn driver_out_of_memory_lowers_the_effective_budget_and_recovers() {
    // The child asserted everything; its exit status said it passed.
    run_oom_child("oom_child");
}

/// The child of the out-of-memory test (does nothing in a normal run).
#[cfg(target_os = "linux")]
#[test]
fn oom_child() {
    let Some(ctx) = oom_child_gpu() else { return };
    const GIB: u64 = 1 << 30;
    let dir = std::env::temp_dir().join(format!("mipflow-oom-{}", std::process::id()));
    let files = write_gallery(&dir, 48, 1024, 0);
    let mut config = StreamConfig::default().with_deterministic(true);
    config.oom_probe_frames = 40;
    let mut h = Harness::new(ctx, config);
    for f in &files {
        h.add(f.clone(), TextureOptions::default(), GIB);
    }
    let _ = h.frame(GIB, f32::INFINITY);
    let base = h.m.context().ledger().total_bytes();

    // What the process maps now, plus 40 MiB: the 48 textures' full chains need 64 MiB.
    set_address_space_limit(mapped_bytes() + 40 * MIB);

    let mut ooms = 0u32;
    let mut first_oom = None;
    let mut caps = Vec::new();
    let mut over = Vec::new();
    for f in 0..160u32 {
        let cap_before = h.m.oom_cap();
        let (peak, _) = h.frame(GIB, 0.0);
        let st = *h.m.streamer().frame_stats();
        if std::env::var_os("MIPFLOW_OOM_TRACE").is_some() {
            println!(
                "frame {f}: total {} staging {} cap {:?} peak {peak} grows {} evictions {} shrinks {} pending {} oom {} limit {}",
                h.m.context().ledger().total_bytes(),
                h.m.context().ledger().bytes(Category::Staging),
                h.m.oom_cap(),
                st.grows,
                st.evictions,
                st.shrinks,
                st.pending,
                st.oom_events,
                h.m.last_plan().limit
            );
        }
        ooms += st.oom_events;
        if st.oom_events > 0 {
            first_oom.get_or_insert(f);
            caps.push(h.m.oom_cap());
        }
        // Once a cap is known, a frame without a new out-of-memory stays under it.
        if let Some(cap) = cap_before
            && st.oom_events == 0
            && peak > cap
        {
            over.push((f, peak, cap));
        }
    }
    let cap = h.m.oom_cap();
    let infos = h.m.streamer().texture_infos();
    let full = infos.iter().filter(|i| i.resident_level == 0).count();
    let floors =
        h.m.streamer()
            .plan_textures()
            .iter()
            .filter(|p| p.level_count > 0 && p.resident_level <= p.floor_level)
            .count();
    let total = h.m.context().ledger().total_bytes();
    set_address_space_limit(libc::RLIM_INFINITY);
    let errors = h.m.context().take_uncaptured_errors();
    println!(
        "oom-result: out-of-memory errors {ooms} (first at frame {first_oom:?}), caps {caps:?}, \
         final cap {cap:?}, total {total} (base {base}), {full} of {} textures whole, {floors} \
         with their floor, uncaptured errors {}",
        infos.len(),
        errors.len()
    );
    assert!(
        ooms >= 1,
        "the address-space limit never failed an allocation"
    );
    // One failed creation per frame at most (the rest wait for the lowered plan). After the
    // first, only the raise after each quiet spell of 40 frames may find the memory still gone;
    // a second failure may follow each (memory the evictions freed is not always reusable by
    // the driver: its heap fragments), never one every frame.
    assert!(
        ooms as usize <= caps.len(),
        "{ooms} errors in {} frames",
        caps.len()
    );
    let spells = (160 - first_oom.unwrap_or(0) as usize) / 40;
    assert!(
        caps.len() <= 2 * (1 + spells),
        "out-of-memory frames: {}",
        caps.len()
    );
    let cap = cap.expect("the cap stays below the budget");
    assert!(total <= cap && cap < GIB, "total {total}, cap {cap}");
    assert!(
        over.is_empty(),
        "frames over the out-of-memory cap: {over:?}"
    );
    assert_eq!(
        floors,
        infos.len(),
        "every texture keeps at least its floor"
    );
    assert!(
        full >= 16,
        "streaming went on under the cap: {full} textures whole"
    );
    assert!(errors.is_empty(), "{errors:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn grows_go_one_level_at_a_time_smallest_first_by_deficit_and_priority() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-order-{}", std::process::id()));
    // 8 textures of 512²: levels of 256, 64, 16 and 4 KiB above the 32² floor.
    let files = write_gallery(&dir, 8, 512, 0);
    let mut config = StreamConfig::default().with_deterministic(true);
    config.upload_bytes_per_frame = 48 << 10;
    let mut h = Harness::new(ctx, config);
    for (i, f) in files.iter().enumerate() {
        // Texture 0 is the hero: its blur weighs four times as much.
        let opts = if i == 0 {
            TextureOptions::with_priority(4.0)
        } else {
            TextureOptions::default()
        };
        h.add(f.clone(), opts, 256 * MIB);
    }
    let mut history = Vec::new();
    let mut steps = 0;
    for _ in 0..100 {
        let _ = h.frame(256 * MIB, 0.0);
        let st = h.m.streamer().frame_stats();
        steps += st.steps;
        // The cap holds, but for a first step larger than it (a 256 KiB level 0).
        assert!(
            st.uploaded_bytes <= 48 << 10 || st.grows + st.steps == 1,
            "{st:?}"
        );
        let r: Vec<u8> =
            h.m.streamer()
                .plan_textures()
                .iter()
                .map(|p| p.resident_level)
                .collect();
        if history.last() != Some(&r) {
            history.push(r.clone());
        }
        if h.all_at(0) {
            break;
        }
    }
    assert!(h.all_at(0), "{history:?}");
    // Every texture went 4 -> 3 -> 2 -> 1 -> 0: one level per step.
    assert_eq!(steps, 8 * 3, "{history:?}");
    for r in &history {
        let others = &r[1..];
        let (lo, hi) = (others.iter().min().unwrap(), others.iter().max().unwrap());
        // Breadth first: no texture is two levels ahead of an equal one.
        assert!(hi - lo <= 1, "{r:?} in {history:?}");
        // The hero is never behind.
        assert!(r[0] <= *lo, "{r:?} in {history:?}");
    }
    // The small levels came first: among equals, every texture had level 2 before any had
    // level 0 (the hero may go ahead: four times the weight outweighs three levels less).
    let first_l0 = history.iter().position(|r| r[1..].contains(&0)).unwrap();
    assert!(
        history[first_l0 - 1][1..].iter().all(|&l| l <= 1),
        "{history:?}"
    );
    assert!(history[1][1..].iter().all(|&l| l == 3), "{history:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn large_levels_upload_in_bands_within_the_cap_and_arrive_intact() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-bands-{}", std::process::id()));
    // 1024²: level 0 is 1 MiB, 16 times the 64 KiB cap; one file zstd, one not.
    let files = write_gallery(&dir, 2, 1024, 2);
    let mut config = StreamConfig::default().with_deterministic(true);
    config.upload_bytes_per_frame = 64 << 10;
    let (mut h, handles) = Harness::with_files(ctx, config, &files);
    let mut frames = 0;
    let mut peak_staging = 0;
    while !h.all_at(0) && frames < 200 {
        let (peak, _) = h.frame(64 * MIB, 0.0);
        assert!(peak <= 64 * MIB);
        // The cap holds every frame: bands, not whole levels.
        assert!(h.m.streamer().frame_stats().uploaded_bytes <= 64 << 10);
        peak_staging = peak_staging.max(h.m.context().ledger().bytes(Category::Staging));
        // Let the GPU finish, so the next frame releases this frame's staging: what staging
        // is held at once then depends on the bands only, not on how busy the machine is.
        h.m.context().wait_idle().unwrap();
        frames += 1;
    }
    assert!(h.all_at(0), "not converged after {frames} frames");
    // 2 x 1.33 MiB at 64 KiB a frame: at least 42 frames.
    assert!(frames >= 42, "{frames} frames");
    assert!(
        peak_staging <= 64 * MIB / 16,
        "staging peaked at {peak_staging}"
    );
    h.assert_whole_and_intact(&files, &handles);
    // Streaming done: the staging ring's chunks are freed after a while without uploads, so a
    // settled scene holds no staging.
    assert!(h.m.context().ledger().bytes(Category::Staging) > 0);
    for _ in 0..130 {
        let _ = h.frame(64 * MIB, 0.0);
        assert_eq!(h.m.streamer().frame_stats().uploaded_bytes, 0);
    }
    assert_eq!(h.m.context().ledger().bytes(Category::Staging), 0);
    assert!(h.m.context().take_uncaptured_errors().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_grow_whose_view_wants_more_is_retargeted_and_nothing_is_uploaded_twice() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-retarget-{}", std::process::id()));
    // 1024²: level 2 is 64 KiB, so with a 32 KiB cap its upload spans frames.
    let files = write_gallery(&dir, 1, 1024, 1);
    let mut config = StreamConfig::default().with_deterministic(true);
    config.upload_bytes_per_frame = 32 << 10;
    let mut h = Harness::new(ctx, config);
    let handles = vec![h.add(files[0].clone(), TextureOptions::default(), 64 * MIB)];
    let p = h.m.streamer().plan_textures()[0];
    // Only the levels finer than the floor come by IO and upload.
    let sizes = h.m.streamer().plan_textures();
    let io_bytes = sizes.bytes_from(0, 0) - sizes.bytes_from(0, p.floor_level);
    let (mut uploaded, mut cancels, mut retargets, mut frames) = (0u64, 0, 0, 0);
    let mut tally = |h: &Harness| {
        let s = h.m.streamer().frame_stats();
        uploaded += s.uploaded_bytes;
        cancels += s.cancels;
        retargets += s.retargets;
    };
    // The camera far away: level 2 is wanted; run until its upload is under way.
    loop {
        let (peak, status) = h.frame(64 * MIB, 2.0);
        assert!(peak <= 64 * MIB && status == PlanStatus::Ok);
        tally(&h);
        frames += 1;
        let p = h.m.streamer().plan_textures()[0];
        if p.resident_level <= 3 {
            assert!(p.busy && p.in_flight_level == 2, "{p:?}");
            break;
        }
        assert!(frames < 20, "the grow to level 2 did not start");
    }
    // The camera comes close: level 0 is wanted while level 2 is still uploading.
    while !h.all_at(0) && frames < 200 {
        let (peak, status) = h.frame(64 * MIB, 0.0);
        assert!(peak <= 64 * MIB && status == PlanStatus::Ok);
        tally(&h);
        frames += 1;
    }
    assert!(h.all_at(0), "not converged after {frames} frames");
    assert!(retargets >= 1, "the grow was not retargeted");
    assert_eq!(cancels, 0, "the grow was cancelled");
    // Every IO level uploaded exactly once: nothing read or uploaded was thrown away.
    assert_eq!(uploaded, io_bytes);
    h.assert_whole_and_intact(&files, &handles);
    assert!(h.m.context().take_uncaptured_errors().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Render targets the driver has no memory for: the frame is made at a lower scale instead of
/// failing, the effective budget is capped at what the driver gave, and the next frames keep
/// within it. Real out-of-memory, as above: a child process limits its address space once set
/// up, then asks for 7680x4320 targets that do not fit in what is left.
#[cfg(target_os = "linux")]
#[test]
fn render_targets_out_of_memory_lower_the_scale_not_the_frame() {
    run_oom_child("render_targets_oom_child");
}

/// The child of the render-target out-of-memory test (does nothing in a normal run).
#[cfg(target_os = "linux")]
#[test]
fn render_targets_oom_child() {
    use glam::{Mat4, Vec3};
    use mipflow::Budget;
    use mipflow::TargetSet;
    use mipflow::low_level::hdr_format;
    use mipflow::{Camera, FrameInput, Renderer, RendererConfig};

    let Some(ctx) = oom_child_gpu() else { return };
    const GIB: u64 = 1 << 30;
    let mut cfg = RendererConfig::default();
    cfg.budget = Budget::bytes(GIB);
    cfg.stream = cfg.stream.with_deterministic(true);
    // Bilinear: no output-sized intermediate, so the targets' bytes follow the scale (with
    // EASU + RCAS and the packed HDR colour, 3/4 would cost more than full scale).
    cfg.upscaler = mipflow::Upscaler::Bilinear;
    let upscaler = cfg.upscaler;
    let mut r = Renderer::with_context(ctx, cfg).unwrap();
    let (pv, pi) = mipflow::panel(1.0, 1.0);
    let mesh = r.add_mesh(&pv, &pi).unwrap();
    let (_, mat) = common::procedural_material(&mut r, 5, 0, 128);
    r.add_instance(mesh, mat, Mat4::IDENTITY).unwrap();
    let input = FrameInput::new(Camera::look_at(Vec3::new(0.0, 0.0, 3.0), Vec3::ZERO));
    let small = r
        .context()
        .create_offscreen_target("small", 320, 180)
        .unwrap();
    let large = r
        .context()
        .create_offscreen_target("large", 7680, 4320)
        .unwrap();
    let (small, large) = (
        small.create_view(&Default::default()),
        large.create_view(&Default::default()),
    );
    // Warm up at a small size: pipelines built, shaders compiled, the texture streamed.
    for _ in 0..10 {
        r.render(&small, &input).unwrap();
    }
    r.context().wait_idle().unwrap();
    // Room for 7680x4320 targets at 3/4 scale, not at full scale (the Renderer's own set, HDR
    // colour in the device's format). The heap's free space counts too (the allocator serves
    // from it without mapping more), so it goes back first.
    let set = TargetSet::renderer_with_hdr(upscaler, hdr_format(r.context().device().features()));
    let full = set.bytes((7680, 4320), 1.0);
    let room = set.bytes((7680, 4320), 0.75);
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe { libc::malloc_trim(0) };
    assert!(room < full);
    set_address_space_limit(mapped_bytes() + room);
    let mut scales = Vec::new();
    let mut ooms = 0;
    let mut result = Ok(());
    for _ in 0..20 {
        match r.render(&large, &input) {
            Ok(st) => {
                scales.push(st.render_scale);
                ooms += st.stream.oom_events;
                if st.instances_drawn == 0 {
                    result = Err("nothing drawn".to_string());
                }
            }
            Err(e) => {
                result = Err(e.to_string());
                break;
            }
        }
    }
    let cap = r.stats().oom_cap_bytes;
    let total = r.context().ledger().total_bytes();
    set_address_space_limit(libc::RLIM_INFINITY);
    println!(
        "oom-result: targets {full} bytes at full scale, room {room}; scales {scales:?}, \
         out-of-memory errors {ooms}, cap {cap:?}, total {total}, result {result:?}"
    );
    result.unwrap();
    assert_eq!(scales.len(), 20);
    assert!(ooms >= 1, "the limit never failed an allocation");
    // The first large frame already came out at a lower scale, and so did every later one.
    assert!(scales.iter().all(|&s| s < 1.0), "{scales:?}");
    // The cap is what the driver gave, and later frames stay within it without failing again.
    let cap = cap.expect("an out-of-memory cap");
    assert!(cap < GIB && total <= cap, "total {total}, cap {cap}");
    assert!(ooms <= 2, "{ooms} out-of-memory errors in 20 frames");
    assert!(r.context().take_uncaptured_errors().is_empty());
}

/// Resident set size of this process now (`/proc/self/status` `VmRSS`), bytes; `None` off Linux.
fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Textures that cannot stream (one level: the floor is the whole texture) are refused
/// at registration when their floor cannot fit a budget, with a typed error that says what they
/// need, before their data is read. One-level 16384² files of a few KiB each (zstd of 256 MiB of
/// zeros) under a 64 MiB budget: each refused (VRAM), and this process's memory does not grow by
/// their size. Then 2048² one-level files (4 MiB) against a CPU floor limit of 9 MiB: two are
/// held, the third is refused (CPU), and removing one makes room again.
#[test]
fn floors_that_cannot_fit_are_refused_before_they_are_read() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-floors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one_level = |name: &str, size: u32| {
        let path = dir.join(name);
        let tex = EncodedTexture {
            format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
            width: size,
            height: size,
            levels: vec![vec![0u8; (size as usize / 4) * (size as usize / 4) * 16]],
            key_values: Vec::new(),
        };
        let mut f = std::fs::File::create(&path).unwrap();
        write_ktx2(&mut f, &tex, Some(3), "mipflow test").unwrap();
        path
    };
    let huge = one_level("huge.ktx2", 16384);
    assert!(
        std::fs::metadata(&huge).unwrap().len() < 64 << 10,
        "a small file"
    );
    let mut config = StreamConfig::default().with_deterministic(true);
    config.cpu_floor_limit = 9 * MIB;
    let mut h = Harness::new(ctx, config);
    h.set_budget(64 * MIB);
    let before = rss_bytes();
    for _ in 0..4 {
        let e =
            h.m.add_texture(
                TextureSource::Path(Arc::new(huge.clone())),
                TextureOptions::default(),
            )
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("huge.ktx2") && text.contains("268435456") && text.contains("CPU"),
            "{text}"
        );
        match e {
            mipflow::Error::FloorTooLarge {
                what,
                needed,
                limit,
                ..
            } => {
                // The CPU limit (9 MiB) is checked first: 256 MiB is over both.
                assert!(what.starts_with("CPU"), "{what}");
                assert_eq!(needed, 256 * MIB);
                assert_eq!(limit, 9 * MIB);
            }
            other => panic!("{other}"),
        }
    }
    if let (Some(a), Some(b)) = (before, rss_bytes()) {
        assert!(
            b < a + 32 * MIB,
            "memory grew by {} MiB registering refused textures",
            (b.saturating_sub(a)) / MIB
        );
    }
    // Against the VRAM budget: a CPU limit that would take it, a budget that cannot.
    let mut config = StreamConfig::default().with_deterministic(true);
    config.cpu_floor_limit = 1 << 40;
    let mut v = Harness::new(common::gpu().unwrap(), config);
    v.set_budget(64 * MIB);
    match v.m.add_texture(
        TextureSource::Path(Arc::new(huge.clone())),
        TextureOptions::default(),
    ) {
        Err(mipflow::Error::FloorTooLarge { what, limit, .. }) => {
            assert!(what.starts_with("VRAM"), "{what}");
            assert_eq!(limit, 64 * MIB);
        }
        other => panic!("{other:?}"),
    }

    // The CPU limit: 4 MiB floors, 9 MiB for all of them.
    let mid = one_level("mid.ktx2", 2048);
    h.set_budget(256 * MIB);
    let a = h.add(mid.clone(), TextureOptions::default(), 256 * MIB);
    h.add(mid.clone(), TextureOptions::default(), 256 * MIB);
    assert_eq!(h.m.streamer().floor_cpu_bytes(), 8 * MIB);
    let refused = h.m.add_texture(
        TextureSource::Path(Arc::new(mid.clone())),
        TextureOptions::default(),
    );
    assert!(
        matches!(refused, Err(mipflow::Error::FloorTooLarge { held, .. }) if held == 8 * MIB),
        "{refused:?}"
    );
    assert!(h.m.remove_texture(a));
    assert_eq!(h.m.streamer().floor_cpu_bytes(), 4 * MIB);
    h.add(mid, TextureOptions::default(), 256 * MIB);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Levels read for a grow that is cancelled before it is built (the view turned away the frame
/// they landed) are kept on the CPU: when the view wants them again, the grow takes them from
/// there, with no IO, and the texture ends up whole and intact.
#[test]
fn a_cancelled_grows_levels_are_reused_without_reading_again() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-reuse-{}", std::process::id()));
    let files = write_gallery(&dir, 1, 256, 0);
    let mut h = Harness::new(ctx, StreamConfig::default().with_deterministic(true));
    let handles = vec![h.add(files[0].clone(), TextureOptions::default(), 64 * MIB)];
    // Level 0 wanted: the grow starts and its read is queued.
    let (_, status) = h.frame(64 * MIB, 0.0);
    assert_eq!(status, PlanStatus::Ok);
    assert_eq!(h.m.streamer().frame_stats().io_requests, 1);
    assert!(h.m.streamer().plan_textures()[0].busy);
    // The next frame its levels land, and the view no longer wants them: cancelled.
    let (_, status) = h.frame(64 * MIB, 40.0);
    assert_eq!(status, PlanStatus::Ok);
    let st = *h.m.streamer().frame_stats();
    assert_eq!((st.cancels, st.cancels_after_arrival), (1, 1), "{st:?}");
    let kept = h.m.streamer().reuse_cache_bytes();
    let p = h.m.streamer().plan_textures()[0];
    let sizes = h.m.streamer().plan_textures();
    assert_eq!(
        kept,
        sizes.bytes_from(0, 0) - sizes.bytes_from(0, p.floor_level)
    );
    // Wanted again: no read, the kept levels are built.
    let (mut io, mut reused, mut frames) = (0, 0, 0);
    while !h.all_at(0) && frames < 50 {
        let (peak, _) = h.frame(64 * MIB, 0.0);
        assert!(peak <= 64 * MIB);
        let st = h.m.streamer().frame_stats();
        io += st.io_requests;
        reused += st.reused_reads;
        frames += 1;
    }
    assert!(h.all_at(0), "not whole after {frames} frames");
    assert_eq!((io, reused), (0, 1), "the levels came from the kept read");
    assert_eq!(h.m.streamer().reuse_cache_bytes(), 0);
    h.assert_whole_and_intact(&files, &handles);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The level data read and not yet built is limited on the CPU side too
/// (`StreamConfig::cpu_io_limit`). Six 256² textures all wanted whole at once, with a limit of
/// one texture's levels above its floor: at most one read is held at a time (the others wait,
/// counted in `io_deferred`), the bytes held never pass the limit, and every texture still ends
/// whole and intact. With the default limit all six reads go out in the first frame.
#[test]
fn the_level_data_held_on_the_cpu_stays_within_its_limit() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-iolimit-{}", std::process::id()));
    let files = write_gallery(&dir, 6, 256, 2);
    let mut config = StreamConfig::default().with_deterministic(true);
    // BC7 256², levels 0..3 above the 32² floor: 65536 + 16384 + 4096 bytes.
    let one = 65536 + 16384 + 4096;
    config.cpu_io_limit = one;
    // The limit is on reads into buffers of their own; reads straight into staging hold no
    // CPU memory (the second half).
    config.staged_reads = false;
    let (mut h, handles) = Harness::with_files(ctx, config, &files);
    let (mut frames, mut deferred, mut max_held) = (0, 0, 0);
    while !h.all_at(0) && frames < 100 {
        let _ = h.frame(64 * MIB, 0.0);
        let st = *h.m.streamer().frame_stats();
        assert!(st.io_requests <= 1, "frame {frames}: {st:?}");
        deferred += st.io_deferred;
        max_held = max_held.max(h.m.streamer().io_held_bytes());
        frames += 1;
    }
    assert!(h.all_at(0), "not whole after {frames} frames");
    assert!(max_held > 0 && max_held <= one, "held {max_held}");
    assert!(deferred >= 5, "{deferred} reads waited");
    assert_eq!(
        h.m.streamer().io_held_bytes(),
        0,
        "every reservation given back"
    );
    h.assert_whole_and_intact(&files, &handles);

    // With the default configuration the six reads go out in the first frame, straight into
    // staging (zstd levels decoded there too): no CPU memory held, and the textures intact.
    let Some(ctx) = common::gpu() else { return };
    let (mut h, handles) = Harness::with_files(
        ctx,
        StreamConfig::default().with_deterministic(true),
        &files,
    );
    let _ = h.frame(64 * MIB, 0.0);
    let st = *h.m.streamer().frame_stats();
    assert_eq!((st.io_requests, st.staged_reads), (6, 6), "{st:?}");
    let mut frames = 0;
    while !h.all_at(0) && frames < 100 {
        assert_eq!(h.m.streamer().io_held_bytes(), 0, "frame {frames}");
        let _ = h.frame(64 * MIB, 0.0);
        frames += 1;
    }
    h.assert_whole_and_intact(&files, &handles);
    let _ = std::fs::remove_dir_all(&dir);
}

/// IO into staging: reads made straight into a lent staging chunk, then a budget
/// drop far below that chunk. The grows holding it are cancelled and the chunk freed in that
/// frame (the frame ends within the new budget, nothing lent any more); with the budget back,
/// every texture streams again and ends whole and intact.
#[test]
fn a_budget_drop_gives_back_the_staging_lent_to_reads() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-stagedrop-{}", std::process::id()));
    let files = write_gallery(&dir, 6, 256, 2);
    let (mut h, handles) = Harness::with_files(
        ctx,
        StreamConfig::default().with_deterministic(true),
        &files,
    );
    let _ = h.frame(64 * MIB, 0.0);
    let st = *h.m.streamer().frame_stats();
    assert_eq!(st.staged_reads, 6, "{st:?}");
    let lent = h.m.context().ledger().bytes(Category::Staging);
    let low = 192 << 10;
    assert!(
        lent > low,
        "the lent chunk ({lent} bytes) is above the low budget"
    );
    let (peak, status) = h.frame(low, 0.0);
    assert_eq!(status, PlanStatus::Ok);
    assert!(peak <= low, "peak {peak} over the budget {low}");
    let total = h.m.context().ledger().total_bytes();
    assert!(total <= low, "total {total} over the budget {low}");
    let mut frames = 0;
    while !h.all_at(0) && frames < 200 {
        let (peak, _) = h.frame(64 * MIB, 0.0);
        assert!(peak <= 64 * MIB);
        frames += 1;
    }
    h.assert_whole_and_intact(&files, &handles);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Textures evicted to their floor get the floor's data back from the CPU, uploaded together
/// after the frame's transitions (one staging buffer, not a `write_texture` a level): every
/// evicted texture's levels, read back from the GPU, are the file's, byte for byte.
#[test]
fn evicted_textures_floors_are_the_files_levels() {
    let Some(ctx) = common::gpu() else { return };
    let dir = std::env::temp_dir().join(format!("mipflow-evict-{}", std::process::id()));
    // 24 textures of 512² (349,552 bytes each at full residency, 8 MiB in all).
    let files = write_gallery(&dir, 24, 512, 3);
    let (mut h, handles) = Harness::with_files(
        ctx,
        StreamConfig::default().with_deterministic(true),
        &files,
    );
    for _ in 0..40 {
        let _ = h.frame(64 * MIB, 0.0);
    }
    assert!(h.all_at(0), "every texture whole first");
    // The budget falls to a fraction of that: in the frame it falls, textures give their levels
    // back, most of them down to their floor (a drop to the floor is an eviction: the texture
    // made again from the CPU's floor data). Their levels are checked after each frame (the
    // later frames grow some back).
    let mut checked = 0;
    for frame in 0..4 {
        let (peak, _) = h.frame(3 * MIB, 0.0);
        assert!(peak <= 3 * MIB, "frame {frame}: peak {peak}");
        for (f, hd) in files.iter().zip(&handles) {
            let p = h.m.streamer().plan_textures()[hd.index() as usize];
            if p.resident_level != p.floor_level || p.busy {
                continue;
            }
            let info = mipflow::ktx2::read_info(f, &Default::default()).unwrap();
            let want = TextureSource::Path(Arc::new(f.clone()))
                .read_levels(
                    &info,
                    p.floor_level..p.level_count,
                    &std::sync::atomic::AtomicBool::new(false),
                )
                .unwrap();
            let tex = h.m.streamer().resident_texture(*hd).unwrap();
            assert_eq!(tex.mip_level_count() as usize, want.len());
            for (l, want) in want.iter().enumerate() {
                let got = mipflow::low_level::read_level(h.m.context(), tex, l as u32).unwrap();
                assert!(
                    got == *want,
                    "frame {frame}, {}: floor level {l} differs",
                    f.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} textures found at their floor");
    assert!(h.m.context().take_uncaptured_errors().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
