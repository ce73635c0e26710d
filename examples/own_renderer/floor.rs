//! The own_renderer example's floor: one large texture that mipflow streams tile by tile (a
//! virtual texture), so the corridor's floor, seen at a grazing angle, holds the tiles near the
//! camera at full resolution and the far ones coarse, not whole levels. The cache's atlas is
//! made on the budget manager's device: it is on the same ledger, and the manager's planner
//! counts it as fixed bytes (one budget).

use mipflow::{
    BudgetManager, Result, TileSource, TileUpdate, VirtualTextures, VtAddress, VtConfig, VtId,
};

/// Tile side of the floor's file and cache.
const TILE: u32 = 128;

/// The floor's cache, its texture and its pipeline.
pub struct Floor {
    pub vt: VirtualTextures,
    pub id: VtId,
    pub pipeline: wgpu::RenderPipeline,
    /// The last update's figures.
    pub last: TileUpdate,
    /// The most bytes its cache takes.
    atlas_bytes: u64,
}

impl Floor {
    /// The floor's texture (`side`², a tiled KTX2 cooked once and cached), its cache of
    /// `atlas_bytes` on `manager`'s device, and a pipeline drawing into the game's targets.
    pub fn new(
        manager: &BudgetManager,
        side: u32,
        atlas_bytes: u64,
        frame_layout: &wgpu::BindGroupLayout,
        vertex: wgpu::VertexBufferLayout<'_>,
        (hdr, depth, samples): (wgpu::TextureFormat, wgpu::TextureFormat, u32),
    ) -> std::result::Result<Self, String> {
        let source = texture(side)?;
        let limits = mipflow::ktx2::ReadLimits::default();
        let info = source.info(&limits).map_err(|e| e.to_string())?;
        let ctx = manager.context();
        let mut vt = VirtualTextures::new(
            ctx,
            &VtConfig {
                format: info.format,
                tile: TILE,
                slots: VtConfig::slots_for(info.format, TILE, atlas_bytes),
                max_pages: 1 << 16,
                max_textures: 1,
            },
        )
        .map_err(|e| e.to_string())?;
        let id = vt
            .add(ctx.queue(), info, source.tiles(), VtAddress::Repeat)
            .map_err(|e| e.to_string())?;
        let device = ctx.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("game floor"),
            source: wgpu::ShaderSource::Wgsl(
                format!("{}\n{}", mipflow::vt_wgsl(1), include_str!("floor.wgsl")).into(),
            ),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("game floor"),
            bind_group_layouts: &[Some(frame_layout), Some(vt.layout())],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("game floor"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(vertex)],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: depth,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: wgpu::MultisampleState {
                count: samples,
                ..Default::default()
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(hdr.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        Ok(Self {
            vt,
            id,
            pipeline,
            last: TileUpdate::default(),
            atlas_bytes,
        })
    }

    /// Before the manager's frame: the cache's size traded against the textures' levels (more
    /// slots when their tiles save more blur per byte than the textures' levels would, the
    /// textures asked for the room; fewer when its last ones save less), at most
    /// `atlas_bytes`.
    pub fn fit(&mut self, manager: &mut BudgetManager) -> Result<()> {
        self.vt.fit_to(manager, self.atlas_bytes)
    }

    /// The frame's tile streaming (the feedback that has arrived, the plan, the loads).
    pub fn update(&mut self, manager: &BudgetManager) -> Result<()> {
        let ctx = manager.context();
        self.last = self.vt.update(ctx.device(), ctx.queue(), 16)?;
        Ok(())
    }

    /// Tiles held (the tail's levels aside) and tiles in the texture's tiled levels.
    pub fn tiles(&self) -> (usize, usize) {
        let Some(t) = self.vt.table(self.id) else {
            return (0, 0);
        };
        let tiled = self
            .vt
            .info(self.id)
            .and_then(|i| i.tiles.as_ref())
            .map_or(0, |l| usize::from(l.tiled_levels));
        let all: usize = (0..tiled)
            .map(|l| {
                let (x, y) = t.tiles(l);
                (x * y) as usize
            })
            .sum();
        let tail = t.level_count() - tiled;
        (t.resident_tiles() - tail, all)
    }
}

/// What the floor's file holds: where the tiles are read from, and the file's description.
enum Source {
    Path(std::path::PathBuf),
    Bytes(std::sync::Arc<[u8]>),
}

impl Source {
    fn info(&self, limits: &mipflow::ktx2::ReadLimits) -> mipflow::Result<mipflow::ktx2::Ktx2Info> {
        match self {
            Source::Path(p) => mipflow::ktx2::read_info(p, limits),
            Source::Bytes(b) => {
                mipflow::ktx2::Ktx2Info::parse(b, b.len() as u64, limits).map_err(|source| {
                    mipflow::Error::Ktx2 {
                        path: "floor".into(),
                        source,
                    }
                })
            }
        }
    }

    fn tiles(&self) -> TileSource {
        match self {
            Source::Path(p) => TileSource::File(p.clone()),
            Source::Bytes(b) => TileSource::Bytes(b.clone()),
        }
    }
}

/// The floor's texture: stone slabs with grooves, cooked to BC7 tiled at 128 with Zstandard,
/// once (cached beside the materials).
fn texture(side: u32) -> std::result::Result<Source, String> {
    use mipflow_cook::{CookOptions, Quality};
    let cache = mipflow_cook::procedural::cache_dir();
    let path = cache.join(format!("own-floor-{side}-t{TILE}.ktx2"));
    if mipflow::ktx2::read_info(&path, &Default::default()).is_ok_and(|i| i.tiles.is_some()) {
        return Ok(Source::Path(path));
    }
    let slab = (side / 8).max(8);
    let img = image::RgbaImage::from_fn(side, side, |x, y| {
        let (sx, sy) = (x / slab, y / slab);
        let groove = x % slab < slab / 32 + 1 || y % slab < slab / 32 + 1;
        let tone = 120 + ((sx * 37 + sy * 91) % 60) as u8;
        let grain = ((x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) >> 27) as u8;
        if groove {
            image::Rgba([40, 38, 36, 255])
        } else {
            image::Rgba([tone + grain, tone - 10 + grain, tone - 25 + grain / 2, 255])
        }
    });
    let opts = CookOptions {
        quality: Quality::Fast,
        ..CookOptions::default()
    };
    let enc = mipflow_cook::encoder_for(Quality::Fast);
    let tex = mipflow_cook::cook_rgba8(img, &opts, enc.as_ref()).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    mipflow::ktx2::write_ktx2_tiled(&mut bytes, &tex, Some(3), "own_renderer example", TILE)
        .map_err(|e| e.to_string())?;
    let tmp = cache.join(format!(".own-floor-{side}.{}.tmp", std::process::id()));
    let written = std::fs::create_dir_all(&cache)
        .and_then(|_| std::fs::write(&tmp, &bytes))
        .and_then(|_| std::fs::rename(&tmp, &path));
    match written {
        Ok(()) => Ok(Source::Path(path)),
        Err(_) => {
            let _ = std::fs::remove_file(&tmp);
            Ok(Source::Bytes(bytes.into()))
        }
    }
}
