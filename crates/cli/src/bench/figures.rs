//! The rows besides the modes: planner time, upload throughput, cook speed and quality, the goals.

use super::*;

/// Planner time per frame on the scene of `benches/planner.rs`: `n` random BC7 textures of 16² to
/// 8192², about half in view, a budget of about half the demand, nine render-scale buckets at
/// 1080p; run to convergence (plans executed by `SimExecutor`, grows built at once) and then
/// timed for `frames` frames of a steady view and of a moving one.
pub fn planner_bench(n: usize, frames: u64) -> PlannerFigures {
    let mut scene = mipflow::testing::planner_fixture::BenchScene::new(n);
    let (converge_frames, note) = match scene.converge(20_000) {
        Ok(f) => (f, None),
        Err(e) => (scene.frame, Some(e)),
    };
    let mut steady = Vec::with_capacity(frames as usize);
    for _ in 0..frames {
        let t0 = Instant::now();
        black_box(scene.plan_frame());
        steady.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let moving = |scene: &mut mipflow::testing::planner_fixture::BenchScene| {
        let mut times = Vec::with_capacity(frames as usize);
        let mut sign = 1.0;
        for _ in 0..frames {
            sign = -sign;
            scene.move_view(0.01 * sign);
            let t0 = Instant::now();
            black_box(scene.plan_frame());
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        Percentiles::of(&times)
    };
    let moving_inc = moving(&mut scene);
    // The same scene through a full pass over every texture (the planner before incremental
    // planning), in the same run.
    let mut config = mipflow::PlannerConfig::default();
    config.incremental = false;
    let mut full = mipflow::testing::planner_fixture::BenchScene::with(n, 0.5, config);
    let (moving_full_us_mean, moving_full_us_p50) = match full.converge(20_000) {
        Ok(_) => {
            let p = moving(&mut full);
            (p.mean, p.p50)
        }
        Err(_) => (0.0, 0.0),
    };
    let s = Percentiles::of(&steady);
    PlannerFigures {
        textures: n,
        converge_frames,
        frames_timed: frames,
        steady_us_mean: s.mean,
        steady_us_p99: s.p99,
        steady_us_p50: s.p50,
        moving_us_mean: moving_inc.mean,
        moving_full_us_mean,
        moving_us_p50: moving_inc.p50,
        moving_full_us_p50,
        note,
    }
}

/// Uploads a full BC7 chain (2048², or 512² when `quick`) the way the streamer does (through its
/// mapped staging ring), submit and wait, several times, against `copy_from_slice` of the same
/// bytes.
pub fn upload_bench(ctx: &GpuContext, quick: bool) -> Result<UploadFigures> {
    let side: u32 = if quick { 512 } else { 2048 };
    let reps: u32 = if quick { 4 } else { 16 };
    let bc = ctx.bc_supported();
    let format = if bc {
        wgpu::TextureFormat::Bc7RgbaUnormSrgb
    } else {
        wgpu::TextureFormat::Rgba8UnormSrgb
    };
    let count = mipflow::low_level::full_mip_count(side, side);
    let mut rng = mipflow::testing::SplitMix64(7);
    let levels: Vec<Vec<u8>> = (0..count)
        .map(|l| {
            let s = (side >> l).max(1);
            let bytes = mipflow::low_level::level_bytes(format, s, s).unwrap_or(0) as usize;
            (0..bytes.div_ceil(8))
                .flat_map(|_| rng.next().to_le_bytes())
                .take(bytes)
                .collect()
        })
        .collect();
    let total: u64 = levels.iter().map(|l| l.len() as u64).sum();
    let tex = ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some("bench upload"),
            size: wgpu::Extent3d {
                width: side,
                height: side,
                depth_or_array_layers: 1,
            },
            mip_level_count: count,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        Category::Other,
    )?;
    // The streamer's path: a persistently mapped staging chunk (rows padded to 256 bytes),
    // copy_buffer_to_texture, submit, wait, and the chunk mapped again for the next upload.
    let mut ring = mipflow::low_level::StagingRing::new(total * 2 + (1 << 20), 1, 1);
    let mut upload_once = |rep: u64| -> Result<()> {
        for (l, data) in levels.iter().enumerate() {
            ring.write_level(ctx, tex.texture(), l as u32, data)?;
        }
        ring.submit(ctx, rep);
        ctx.wait_idle()?;
        ring.recycle(rep);
        Ok(ctx.wait_idle()?)
    };
    upload_once(0)?; // warm-up
    let t0 = Instant::now();
    for rep in 0..reps {
        upload_once(u64::from(rep) + 1)?;
    }
    let upload_s = t0.elapsed().as_secs_f64();
    let mut dst: Vec<Vec<u8>> = levels.iter().map(|l| vec![0u8; l.len()]).collect();
    // memcpy is fast and so noisier: more repetitions, same bytes per repetition.
    let memcpy_reps = reps * 4;
    let t0 = Instant::now();
    for _ in 0..memcpy_reps {
        for (d, s) in dst.iter_mut().zip(&levels) {
            d.copy_from_slice(black_box(s));
        }
        black_box(&mut dst);
    }
    let memcpy_s = t0.elapsed().as_secs_f64();
    let upload_mb_s = total as f64 * f64::from(reps) / upload_s.max(1e-9) / 1e6;
    let memcpy_mb_s = total as f64 * f64::from(memcpy_reps) / memcpy_s.max(1e-9) / 1e6;
    let read = if bc {
        Some(read_upload_bench(ctx, &tex, &levels, side, reps)?)
    } else {
        None
    };
    let figure = |f: fn(&ReadFigures) -> f64| read.as_ref().map_or(0.0, f);
    let (read_upload_mb_s, staged_read_upload_mb_s, streamed_upload_mb_s) = (
        figure(|r| r.own),
        figure(|r| r.staged),
        figure(|r| r.streamed),
    );
    Ok(UploadFigures {
        what: format!(
            "{side}x{side} {}, {count} levels",
            if bc {
                "BC7"
            } else {
                "RGBA8 (no BC on this adapter)"
            }
        ),
        bytes: total,
        reps,
        upload_mb_s,
        memcpy_mb_s,
        ratio: upload_mb_s / memcpy_mb_s.max(1e-9),
        read_upload_mb_s,
        staged_read_upload_mb_s,
        staged_ratio: staged_read_upload_mb_s / memcpy_mb_s.max(1e-9),
        streamed_upload_mb_s,
        streamed_ratio: streamed_upload_mb_s / memcpy_mb_s.max(1e-9),
        file_read_mb_s: figure(|r| r.file_read),
        file_upload_mb_s: figure(|r| r.file_upload),
        file_read_bounce_mb_s: figure(|r| r.bounce_read),
    })
}

/// The whole upload path of a streamed texture, from its KTX2 file in memory to the texture on
/// the GPU, two ways in the same run: read into buffers of its own (an IO worker's copy) and
/// then through the ring's bands (the render thread's copy); and read straight into a lent
/// staging chunk (one copy), the copies into the texture recorded from there. Each: every level,
/// submit, wait, the staging mapped again. MB/s, both; and the staged path as the streamer runs
/// it, reads on an IO thread overlapping the copies ([`streamed_upload`]).
fn read_upload_bench(
    ctx: &GpuContext,
    tex: &TrackedTexture,
    levels: &[Vec<u8>],
    side: u32,
    reps: u32,
) -> Result<ReadFigures> {
    use std::sync::atomic::AtomicBool;
    let fail = |reason: String| {
        Error::Mipflow(mipflow::Error::InvalidResource {
            label: "bench read + upload".into(),
            reason,
        })
    };
    let format = tex.texture().format();
    let encoded = mipflow::ktx2::EncodedTexture {
        format,
        width: side,
        height: side,
        levels: levels.to_vec(),
        key_values: Vec::new(),
    };
    let mut file = Vec::new();
    mipflow::ktx2::write_ktx2(&mut file, &encoded, None, "mipflow bench")
        .map_err(|e| fail(format!("KTX2: {e}")))?;
    let source = TextureSource::bytes(file);
    let info = source.info(&mipflow::ktx2::ReadLimits::default())?;
    let count = levels.len() as u8;
    let total: u64 = levels.iter().map(|l| l.len() as u64).sum();
    let rows: Vec<(u32, u32)> = (0..levels.len())
        .map(|l| {
            let (w, h) = info.level_dims(l);
            mipflow::low_level::level_rows_of(format, w, h)
        })
        .collect();
    let padded: u64 = rows
        .iter()
        .map(|&(r, n)| u64::from(r.div_ceil(256) * 256) * u64::from(n) + 256)
        .sum();
    let cancel = AtomicBool::new(false);
    let mut ring = mipflow::low_level::StagingRing::new(padded.max(total * 2), 2, 2);
    let mut bounce = vec![0u8; 128 << 10];
    let mut own = |rep: u64| -> Result<()> {
        let data = source
            .read_levels(&info, 0..count, &cancel)
            .map_err(|e| fail(e.to_string()))?;
        for (l, d) in data.iter().enumerate() {
            ring.write_level(ctx, tex.texture(), l as u32, d)?;
        }
        ring.submit(ctx, rep);
        ctx.wait_idle()?;
        ring.recycle(rep);
        Ok(ctx.wait_idle()?)
    };
    own(0)?;
    let t0 = Instant::now();
    for rep in 0..reps {
        own(u64::from(rep) + 1)?;
    }
    let own_s = t0.elapsed().as_secs_f64();
    // The staged path from `source`: every level read into a lent chunk, and with `upload` the
    // copies into the texture, submit, wait, the chunk given back. Returns the seconds the
    // read itself took.
    let mut staged = |source: &TextureSource, rep: u64, upload: bool| -> Result<f64> {
        let lease = ring
            .lend(ctx, &rows, u64::MAX)?
            .ok_or_else(|| fail("no staging chunk lent".into()))?;
        let t0 = Instant::now();
        let staged = source
            .read_levels_staged(&info, 0..count, &cancel, lease, &mut bounce)
            .map_err(|e| fail(e.to_string()))?;
        let read_s = t0.elapsed().as_secs_f64();
        if upload {
            for (l, s) in staged.iter().enumerate() {
                let n = s.layout().rows;
                ring.copy_staged(ctx, s, tex.texture(), l as u32, 0, n)?;
            }
        }
        ring.submit(ctx, rep);
        drop(staged);
        ctx.wait_idle()?;
        ring.recycle(rep);
        ctx.wait_idle()?;
        ring.recycle(rep);
        Ok(read_s)
    };
    // Seconds for `reps` repetitions after a warm-up: the whole path with `upload`, the reads
    // alone without.
    let mut timed = |source: &TextureSource, first: u64, upload: bool| -> Result<f64> {
        staged(source, first, upload)?;
        let t0 = Instant::now();
        let mut reads = 0.0;
        for rep in 0..reps {
            reads += staged(source, first + 1 + u64::from(rep), upload)?;
        }
        Ok(if upload {
            t0.elapsed().as_secs_f64()
        } else {
            reads
        })
    };
    let staged_s = timed(&source, 1_000, true)?;
    // The same file on disk (in the page cache, as a game's recently read assets are): its
    // large levels are read from the file straight into the staging (on Unix). And the same
    // file through a game's reader (`KtxReader`), which reads through the bounce buffer: what
    // every file read did before.
    let dir = tempfile::tempdir().map_err(|e| fail(format!("temp dir: {e}")))?;
    let path = dir.path().join("bench.ktx2");
    let TextureSource::Bytes(bytes) = &source else {
        unreachable!("the bench's source is in memory")
    };
    std::fs::write(&path, &bytes[..]).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let on_disk = TextureSource::path(&path);
    let file = std::fs::File::open(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let through_reader = TextureSource::reader(FileReader(file));
    let file_read_s = timed(&on_disk, 3_000, false)?;
    let file_upload_s = timed(&on_disk, 4_000, true)?;
    let bounce_read_s = timed(&through_reader, 5_000, false)?;
    let streamed_s = streamed_upload(ctx, tex, &source, &info, &rows, padded.max(total * 2), reps)
        .map_err(fail)?;
    let mb_s = |s: f64| total as f64 * f64::from(reps) / s.max(1e-9) / 1e6;
    Ok(ReadFigures {
        own: mb_s(own_s),
        staged: mb_s(staged_s),
        streamed: mb_s(streamed_s),
        file_read: mb_s(file_read_s),
        file_upload: mb_s(file_upload_s),
        bounce_read: mb_s(bounce_read_s),
    })
}

/// [`read_upload_bench`]'s figures, MB/s.
struct ReadFigures {
    own: f64,
    staged: f64,
    streamed: f64,
    file_read: f64,
    file_upload: f64,
    bounce_read: f64,
}

/// A file read through the [`mipflow::KtxReader`] interface (a game's archive would
/// be one): the IO workers read it through their bounce buffer.
#[derive(Debug)]
struct FileReader(std::fs::File);

impl mipflow::KtxReader for FileReader {
    fn byte_len(&self) -> std::io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.0, buf, offset)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek};
            let mut f = &self.0;
            f.seek(std::io::SeekFrom::Start(offset))?;
            f.read_exact(buf)
        }
    }
}

/// The staged path as the streamer runs it: an IO thread reads each texture's levels straight
/// into a lent staging chunk while this (the render) thread records the copies of the one read
/// before, submits and waits; so a read overlaps the GPU's copy of the previous texture. `reps`
/// textures, after one read that overlaps nothing; the seconds they took.
fn streamed_upload(
    ctx: &GpuContext,
    tex: &TrackedTexture,
    source: &TextureSource,
    info: &mipflow::ktx2::Ktx2Info,
    rows: &[(u32, u32)],
    chunk_bytes: u64,
    reps: u32,
) -> std::result::Result<f64, String> {
    use mipflow::low_level::{StagedLevel, StagingLease};
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;
    let count = rows.len() as u8;
    // Three base chunks: one being read, one being copied, one for the bands.
    let mut ring = mipflow::low_level::StagingRing::new(chunk_bytes, 3, 3);
    let (to_io, requests) = mpsc::channel::<StagingLease>();
    let (to_render, results) =
        mpsc::channel::<std::result::Result<Vec<StagedLevel>, mipflow::ReadError>>();
    let cancel = AtomicBool::new(false);
    std::thread::scope(|s| {
        let cancel = &cancel;
        s.spawn(move || {
            let mut bounce = vec![0u8; 128 << 10];
            for lease in requests {
                let read = source.read_levels_staged(info, 0..count, cancel, lease, &mut bounce);
                if to_render.send(read).is_err() {
                    return;
                }
            }
        });
        let lend = |ring: &mut mipflow::low_level::StagingRing| {
            ring.lend(ctx, rows, u64::MAX)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| "no staging chunk lent".to_string())
        };
        let mut run = || -> std::result::Result<f64, String> {
            let send = |lease| {
                to_io
                    .send(lease)
                    .map_err(|_| "the IO thread ended".to_string())
            };
            send(lend(&mut ring)?)?;
            let mut t0 = Instant::now();
            // One more than timed: the first copy waits for a read that overlapped nothing.
            for rep in 0..=u64::from(reps) {
                let staged = results
                    .recv()
                    .map_err(|_| "the IO thread ended".to_string())?
                    .map_err(|e| e.to_string())?;
                if rep == 0 {
                    t0 = Instant::now();
                }
                if rep < u64::from(reps) {
                    send(lend(&mut ring)?)?;
                }
                for (l, st) in staged.iter().enumerate() {
                    ring.copy_staged(ctx, st, tex.texture(), l as u32, 0, st.layout().rows)
                        .map_err(|e| e.to_string())?;
                }
                ring.submit(ctx, 2_000 + rep);
                drop(staged);
                ctx.wait_idle().map_err(|e| e.to_string())?;
                ring.recycle(2_000 + rep);
                ctx.wait_idle().map_err(|e| e.to_string())?;
                ring.recycle(2_000 + rep);
            }
            Ok(t0.elapsed().as_secs_f64())
        };
        let out = run();
        drop(to_io); // ends the IO thread
        out
    })
}

/// The images to cook: the photographs in `assets/photos/` (only the smallest when `quick`), or
/// the test pattern when they are missing.
pub(super) fn cook_inputs(quick: bool) -> Vec<image::RgbaImage> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/photos");
    let names: &[&str] = if quick {
        &["brick"]
    } else {
        &["astronaut", "coffee", "chelsea", "brick"]
    };
    let mut out: Vec<image::RgbaImage> = names
        .iter()
        .filter_map(|n| image::open(dir.join(format!("{n}.png"))).ok())
        .map(|i| i.to_rgba8())
        .collect();
    if out.is_empty() {
        out.push(mipflow_cook::procedural::test_pattern(if quick {
            128
        } else {
            512
        }));
    }
    out
}

/// Cooks the inputs at each quality (mips, BC7, every level; all cores), and measures level 0's
/// RGB PSNR after BC7.
pub fn cook_bench(quick: bool) -> Result<Vec<CookFigures>> {
    let images = cook_inputs(quick);
    let megapixels: f64 = images
        .iter()
        .map(|i| f64::from(i.width()) * f64::from(i.height()) / 1e6)
        .sum();
    let mut out = Vec::new();
    for q in [Quality::Fast, Quality::Default, Quality::Slow] {
        let opts = CookOptions {
            quality: q,
            ..CookOptions::default()
        };
        let encoder = mipflow_cook::encoder_for(q);
        let t0 = Instant::now();
        let mut cooked = Vec::with_capacity(images.len());
        for img in &images {
            let tex = mipflow_cook::cook_rgba8(img.clone(), &opts, encoder.as_ref())?;
            cooked.push(tex);
        }
        let seconds = t0.elapsed().as_secs_f64();
        let psnr: Vec<f64> = images
            .iter()
            .zip(&cooked)
            .map(|(img, tex)| {
                let level0 = tex.levels.first().map_or(&[][..], Vec::as_slice);
                let decoded = mipflow_cook::decode_bc7(level0, img.width(), img.height());
                capped_psnr(img.as_raw(), &decoded)
            })
            .collect();
        out.push(CookFigures {
            quality: format!("{q:?}").to_lowercase(),
            images: images.len(),
            megapixels,
            seconds,
            mp_per_s: megapixels / seconds.max(1e-9),
            psnr_mean_db: psnr.iter().sum::<f64>() / psnr.len().max(1) as f64,
            psnr_min_db: psnr.iter().copied().fold(f64::INFINITY, f64::min),
        });
    }
    Ok(out)
}

pub(super) fn goals(r: &BenchReport, opts: &BenchOptions) -> Vec<Goal> {
    let mut g = Vec::new();
    let (Some(a), Some(b), Some(c)) = (r.modes.first(), r.modes.get(1), r.modes.get(2)) else {
        return g;
    };
    let quarter = opts.budget == BudgetRule::QuarterOfBc7;
    let note = if quarter {
        ""
    } else {
        " (goal stated for a quarter of (b); this run's budget differs)"
    };
    let frac = c.peak_bytes as f64 / a.peak_bytes.max(1) as f64;
    g.push(Goal {
        name: format!("(c) peak VRAM against (a){note}"),
        measured: format!("1/{:.1}", 1.0 / frac.max(1e-12)),
        target: "at most 1/16".into(),
        met: Some(frac <= 1.0 / 16.0),
    });
    g.push(Goal {
        name: format!("(c) PSNR against (a), every compared frame{note}"),
        measured: c
            .psnr_min_db
            .map_or("n/a".into(), |p| format!("min {p:.2} dB")),
        target: "at least 40 dB".into(),
        met: c.psnr_min_db.map(|p| p >= 40.0),
    });
    // Why, when the budget could not even hold the floors (a small gallery under the default
    // budget, a quarter of (b)'s textures, can be below its render targets alone).
    let too_small = if c.budget_too_small_frames > 0 {
        format!(
            " ({} frame(s) with a budget below what the fixed bytes, the smallest render targets \
             and every floor tail need: {:.1} MiB; pass a larger --budget)",
            c.budget_too_small_frames,
            c.floor_bytes_max as f64 / f64::from(1u32 << 20)
        )
    } else {
        String::new()
    };
    g.push(Goal {
        name: "(c) frames over budget".into(),
        measured: format!("{}{too_small}", c.frames_over_budget),
        target: "0".into(),
        met: Some(c.frames_over_budget == 0),
    });
    let p99 = c.frame_ms.p99 / b.frame_ms.p99.max(1e-9);
    g.push(Goal {
        name: "(c) p99 frame time against (b)".into(),
        measured: format!("{p99:.2}x"),
        target: "at most 1.25x".into(),
        met: Some(p99 <= 1.25),
    });
    if let Some(p) = &r.planner {
        g.push(Goal {
            name: format!("planner per frame at {} textures, steady view", p.textures),
            measured: format!(
                "median {:.1} µs (mean {:.1})",
                p.steady_us_p50, p.steady_us_mean
            ),
            target: "at most 50 µs at 10k".into(),
            met: (p.textures == 10_000 && p.note.is_none()).then_some(p.steady_us_p50 <= 50.0),
        });
    }
    if let Some(u) = &r.upload {
        g.push(Goal {
            name: "upload against memcpy".into(),
            measured: format!("{:.0}%", u.ratio * 100.0),
            target: "at least 50%".into(),
            met: Some(u.ratio >= 0.5),
        });
        if u.staged_read_upload_mb_s > 0.0 {
            g.push(Goal {
                name: "read + upload (straight into staging) against memcpy".into(),
                measured: format!(
                    "{:.0}% (into buffers of their own: {:.0}%)",
                    u.staged_ratio * 100.0,
                    u.read_upload_mb_s / u.memcpy_mb_s.max(1e-9) * 100.0
                ),
                target: "at least 50%".into(),
                met: Some(u.staged_ratio >= 0.5),
            });
        }
        if u.streamed_upload_mb_s > 0.0 {
            g.push(Goal {
                name: "read + upload as streamed (reads on an IO thread overlapping the copies) against memcpy".into(),
                measured: format!("{:.0}%", u.streamed_ratio * 100.0),
                target: "at least 50%".into(),
                met: Some(u.streamed_ratio >= 0.5),
            });
        }
    }
    g
}
