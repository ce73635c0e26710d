//! Reading streamed texture files (hardened against hostile files): KTX2 with BCn blocks, Basis
//! Universal KTX2 (transcoded level by level, [`BasisInfo`]) and DDS ([`DdsHeader`]); and
//! writing KTX2, for block-compressed (BC1 to BC7) textures with mip chains.
//!
//! - [`Ktx2Info::parse`] / [`read_info`] validate the header, the level index, the Data Format
//!   Descriptor (DFD) and the key/value data of an untrusted file (or a DDS header) **before
//!   allocating anything whose size comes from the file**, and expose each level's byte range
//!   ([`LevelInfo`]) so that streaming can read one level without reading the whole file.
//! - [`read_level`] reads one level by its byte range, undoes Zstandard supercompression into an
//!   output bounded by the size the format and the dimensions allow, transcodes a Basis level,
//!   and checks the size.
//! - [`validate`] does the same checks as [`Ktx2Info::parse`] but collects every problem instead
//!   of stopping at the first one (used by `mipflow inspect`).
//! - [`write_ktx2`] writes a KTX 2.0 file (the format's DFD, levels stored smallest first with the
//!   spec's alignment, `KTXorientation` and `KTXwriter` metadata, optional per-level Zstandard);
//!   [`write_dds`] a DDS file (tests and tools).
//!
//! Only what mipflow streams is accepted: 2D, one layer, one face, a format of [`FORMATS`] (every
//! BCn format: BC1 to BC7, UNORM, SNORM, sRGB, BC6H's floats) raw or Zstandard, or Basis UASTC,
//! UASTC HDR and ETC1S. `KTXorientation` is read ([`Ktx2Info::orientation`]); the data is never
//! rewritten for it. Everything else (cube maps, arrays, 3D, uncompressed formats) is a typed
//! [`Ktx2Error`] that says so, never a panic.

mod basis;
mod bytes;
mod dds;
mod format;
mod metadata;
mod open;
mod reader;
mod staged;
mod tiles;
mod writer;

pub use basis::{BasisChannels, BasisCodec, BasisInfo};
pub use dds::{DX10_HEADER_LEN as DDS_HEADER_LEN, DdsHeader, write_dds};
pub use format::{BlockFormat, FORMATS, level_size};
pub(crate) use open::open_checked;
pub use open::{read_info, read_info_from};
#[cfg(unix)]
pub(crate) use reader::level_span;
pub use reader::{HEADER_LEN, RawHeader, Validation, read_level, validate};
pub use staged::{read_level_in, read_level_with};
pub use tiles::{TILE_SIZE_RANGE, TILES_KEY, TileLayout, TileSpan, read_tile, tile_span};
pub use writer::{write_ktx2, write_ktx2_tiled};

/// `VK_FORMAT_BC7_UNORM_BLOCK`.
pub const VK_FORMAT_BC7_UNORM: u32 = 145;
/// `VK_FORMAT_BC7_SRGB_BLOCK`.
pub const VK_FORMAT_BC7_SRGB: u32 = 146;
/// Key of the key/value entry in which `mipflow cook` stores the hash of its input and settings.
pub const COOK_STAMP_KEY: &str = "mipflow.cook";

/// What is wrong with a KTX2 file. Every variant says what and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Ktx2Error {
    /// Reading the file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The file ends before a structure it declares.
    #[error("truncated: {what} needs {needed} bytes, only {available} available")]
    Truncated {
        /// The structure being read.
        what: &'static str,
        /// Bytes needed from the start of the file.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The file starts with neither the KTX 2.0 identifier nor DDS's `"DDS "`.
    #[error("neither a KTX 2.0 nor a DDS file (bad identifier)")]
    BadMagic,
    /// A DDS file that mipflow does not stream (a cube map, an array, a volume, an uncompressed
    /// or unknown pixel format): what it is.
    #[error("DDS: {what}")]
    UnsupportedDds {
        /// What the file is, and what mipflow streams instead.
        what: String,
    },
    /// A DDS header field that cannot be right.
    #[error("DDS header: {field} is {found}: {reason}")]
    BadDdsHeader {
        /// The field.
        field: &'static str,
        /// The value found.
        found: u64,
        /// Why it is wrong.
        reason: &'static str,
    },
    /// The file is larger than [`ReadLimits::max_file_bytes`].
    #[error("file is {len} bytes, more than the reader's limit of {max} bytes")]
    FileTooLarge {
        /// File length.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// `vkFormat` is not one of [`FORMATS`].
    #[error("unsupported vkFormat {vk_format}{}; mipflow reads {}", format::unsupported_note(*vk_format), format::SUPPORTED)]
    UnsupportedFormat {
        /// The value found.
        vk_format: u32,
    },
    /// `typeSize` must be 1 for block-compressed formats.
    #[error("typeSize is {type_size}, must be 1 for block-compressed formats")]
    BadTypeSize {
        /// The value found.
        type_size: u32,
    },
    /// Width or height is zero (1D textures are not supported).
    #[error(
        "size is {width}x{height}: pixelWidth and pixelHeight must both be at least 1 (1D textures \
         are not supported)"
    )]
    ZeroSize {
        /// pixelWidth.
        width: u32,
        /// pixelHeight.
        height: u32,
    },
    /// Width or height is above [`ReadLimits::max_dimension`].
    #[error("{width}x{height} exceeds the limit of {max} texels per side")]
    TooLarge {
        /// pixelWidth.
        width: u32,
        /// pixelHeight.
        height: u32,
        /// The limit.
        max: u32,
    },
    /// `pixelDepth` is not 0 (3D textures are not supported).
    #[error("pixelDepth is {depth}, must be 0 (3D textures are not supported)")]
    UnsupportedDepth {
        /// The value found.
        depth: u32,
    },
    /// `layerCount` is not 0 (array textures are not supported).
    #[error("layerCount is {layer_count}, must be 0 (array textures are not supported)")]
    UnsupportedLayers {
        /// The value found.
        layer_count: u32,
    },
    /// `faceCount` is not 1 (0 is invalid, 6 is a cube map, which is not supported).
    #[error("faceCount is {face_count}, must be 1 (cube maps are not supported)")]
    UnsupportedFaces {
        /// The value found.
        face_count: u32,
    },
    /// `levelCount` is 0 (not allowed for block-compressed formats) or more than the size allows.
    #[error("levelCount is {level_count}, must be between 1 and {max}")]
    BadLevelCount {
        /// The value found.
        level_count: u32,
        /// Most levels the dimensions allow.
        max: u32,
    },
    /// `supercompressionScheme` is neither 0 (none) nor 2 (Zstandard).
    #[error(
        "unsupported supercompressionScheme {scheme} (mipflow reads 0 = none, 2 = Zstandard, and 1 = BasisLZ in a Basis ETC1S file)"
    )]
    UnsupportedSupercompression {
        /// The value found.
        scheme: u32,
    },
    /// A tiled file's layout (`mipflowTiles`) is malformed or does not match the file, or a
    /// tile was asked of a file or level that has none.
    #[error("tiles: {reason}")]
    BadTiles {
        /// What is wrong.
        reason: String,
    },
    /// A Basis Universal file mipflow does not transcode (UASTC HDR, animation): what it is.
    #[error("Basis Universal: {what} is not streamed")]
    UnsupportedBasis {
        /// What the file holds.
        what: String,
    },
    /// An ETC1S file's global data (codebooks, image descriptors) is malformed.
    #[error("BasisLZ global data: {reason}")]
    BadBasisGlobal {
        /// What is wrong.
        reason: String,
    },
    /// A Basis level's blocks could not be transcoded.
    #[error("level {level}: Basis transcode failed: {reason}")]
    Transcode {
        /// The level.
        level: usize,
        /// Why.
        reason: String,
    },
    /// Supercompression global data is present, but no supported scheme uses it.
    #[error(
        "unexpected supercompression global data at byte {offset} ({length} bytes): no scheme \
         mipflow reads has any (sgdByteLength must be 0)"
    )]
    UnexpectedSgd {
        /// sgdByteOffset.
        offset: u64,
        /// sgdByteLength.
        length: u64,
    },
    /// The DFD or key/value section is outside the file, misplaced, misaligned or over the limits.
    #[error("{section} section at {offset} ({length} bytes): {reason}")]
    BadSection {
        /// `"DFD"` or `"key/value data"`.
        section: &'static str,
        /// Its offset.
        offset: u64,
        /// Its length.
        length: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// The DFD is structurally malformed.
    #[error("malformed DFD: {reason}")]
    BadDfd {
        /// What is wrong.
        reason: String,
    },
    /// A DFD field disagrees with what the header's vkFormat requires.
    #[error("DFD field {field} is {found}, expected {expected}")]
    DfdMismatch {
        /// The field.
        field: &'static str,
        /// What the format requires.
        expected: u64,
        /// What the file has.
        found: u64,
    },
    /// A key/value entry is malformed (bad length, no NUL, not UTF-8, duplicate or unsorted key).
    #[error("key/value data at file offset {offset}: {reason}")]
    BadKeyValue {
        /// File offset of the entry.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A level's byte range is not inside the file.
    #[error(
        "level {level}: byteOffset {offset} + byteLength {length} runs past the end of the file \
         ({file_len} bytes)"
    )]
    LevelOutOfBounds {
        /// Level index (0 = full size).
        level: usize,
        /// byteOffset.
        offset: u64,
        /// byteLength.
        length: u64,
        /// File length.
        file_len: u64,
    },
    /// A level starts inside the header, level index, DFD or key/value data.
    #[error(
        "level {level}: offset {offset} is inside the header region (which ends at {header_end})"
    )]
    LevelInHeader {
        /// Level index.
        level: usize,
        /// byteOffset.
        offset: u64,
        /// End of the header region.
        header_end: u64,
    },
    /// A level's offset breaks the alignment the specification requires.
    #[error("level {level}: offset {offset} is not a multiple of {alignment}")]
    LevelMisaligned {
        /// Level index.
        level: usize,
        /// byteOffset.
        offset: u64,
        /// Required alignment.
        alignment: u64,
    },
    /// A level's (uncompressed) size disagrees with the format's size for its dimensions.
    #[error("level {level}: {what} is {found} bytes, the format at this size needs {expected}")]
    LevelSizeMismatch {
        /// Level index.
        level: usize,
        /// `"byteLength"` or `"uncompressedByteLength"`.
        what: &'static str,
        /// Size required by the format.
        expected: u64,
        /// Size in the file.
        found: u64,
    },
    /// A supercompressed level is empty, or larger than Zstandard could ever make that level.
    #[error("level {level}: compressed length {length} is outside 1..={bound}")]
    LevelCompressedSize {
        /// Level index.
        level: usize,
        /// byteLength.
        length: u64,
        /// Zstandard's worst-case bound for the level.
        bound: u64,
    },
    /// Two levels' byte ranges overlap.
    #[error("levels {level} and {other} overlap")]
    LevelOverlap {
        /// One level.
        level: usize,
        /// The other.
        other: usize,
    },
    /// Levels are not stored smallest first, as the specification requires.
    #[error(
        "level {level} is stored before level {smaller}, but levels must be stored smallest first"
    )]
    LevelOrder {
        /// The larger level.
        level: usize,
        /// The smaller level stored after it.
        smaller: usize,
    },
    /// [`read_level`] was asked for a level the file does not have.
    #[error("level {level} requested, but the file has only {count} levels")]
    NoSuchLevel {
        /// Requested level.
        level: usize,
        /// Levels in the file.
        count: usize,
    },
    /// The memory for a level's bytes could not be had (the process is at its limit): the
    /// read fails, and may succeed later; nothing aborts.
    #[error("level {level}: out of memory for its {bytes} bytes")]
    OutOfMemory {
        /// Level index.
        level: usize,
        /// The bytes that could not be allocated.
        bytes: u64,
    },
    /// Zstandard decoding of a level failed.
    #[error("level {level}: Zstandard decoding failed: {reason}")]
    Decompress {
        /// Level index.
        level: usize,
        /// The decoder's message.
        reason: String,
    },
    /// A level decompressed to a size other than its declared uncompressed size.
    #[error(
        "level {level}: decompressed to {}{found} bytes, the format at this size needs {expected}",
        if found > expected { "at least " } else { "" }
    )]
    DecompressedSize {
        /// Level index.
        level: usize,
        /// Declared (and format-checked) size.
        expected: u64,
        /// Bytes produced (`expected + 1` means "more than expected"; decoding stops there).
        found: u64,
    },
}

/// Limits applied to untrusted files. `Default` gives limits suitable for desktop GPUs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadLimits {
    /// Largest accepted width or height (default 16384, the common `max_texture_dimension_2d`).
    pub max_dimension: u32,
    /// Largest accepted file (default 4 GiB).
    pub max_file_bytes: u64,
    /// Largest accepted DFD section (default 4 KiB; a one-sample BCn DFD is 44 bytes).
    pub max_dfd_bytes: u32,
    /// Largest accepted key/value section (default 1 MiB).
    pub max_kvd_bytes: u32,
    /// Largest accepted supercompression global data (ETC1S's codebooks; default 16 MiB, which
    /// a 16384x16384 ETC1S texture's codebooks stay well under).
    pub max_sgd_bytes: u64,
    /// Most key/value entries accepted (default 256).
    pub max_key_values: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_dimension: 16384,
            max_file_bytes: 4 << 30,
            max_dfd_bytes: 4096,
            max_kvd_bytes: 1 << 20,
            max_sgd_bytes: 16 << 20,
            max_key_values: 256,
        }
    }
}

/// The supercompression applied to each level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Supercompression {
    /// Levels are stored as raw blocks.
    None,
    /// Each level is one Zstandard frame.
    Zstd,
    /// Basis Universal ETC1S's BasisLZ (scheme 1): levels decoded with the file's global
    /// codebooks ([`BasisInfo`]).
    BasisLz,
}

/// Where one level lives in the file. Validated against the file length and the format math.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LevelInfo {
    /// Offset of the level's bytes from the start of the file.
    pub offset: u64,
    /// Length of the stored (possibly supercompressed) bytes.
    pub byte_length: u64,
    /// Length of the blocks after decompression (equals the format's size for the level).
    pub uncompressed_byte_length: u64,
}

/// A summary of the Basic Data Format Descriptor block.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DfdSummary {
    /// Descriptor block version number (2 for KDF 1.3).
    pub version: u16,
    /// Colour model (128 = BC1 ... 134 = BC7).
    pub color_model: u8,
    /// Colour primaries (1 = BT.709/sRGB).
    pub color_primaries: u8,
    /// Transfer function (1 = linear, 2 = sRGB).
    pub transfer_function: u8,
    /// Whether the alpha-premultiplied flag is set.
    pub premultiplied_alpha: bool,
    /// Texel block dimensions (width, height, depth).
    pub block_dimensions: [u32; 3],
    /// Bytes per block in plane 0.
    pub bytes_plane0: u8,
    /// Number of samples.
    pub samples: usize,
    /// Number of descriptor blocks (a Basic block, plus any others).
    pub blocks: usize,
    /// Each sample's channel id (the low 4 bits of its `channelType`): what a Basis file's
    /// channels are (UASTC `RGBA` 3, `RRRG` 5, `RG` 6; ETC1S `RGB` 0, `RRR` 3, `GGG` 4, `AAA` 15).
    pub channel_ids: Vec<u8>,
}

/// Everything streaming needs to know about a validated KTX2 file.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Ktx2Info {
    /// The block format: BC1 to BC7 and BC6H (unorm or sRGB, signed or unsigned where the
    /// format has both), or, for a texture added resident, the texture's own.
    pub format: wgpu::TextureFormat,
    /// Width of level 0 in texels.
    pub width: u32,
    /// Height of level 0 in texels.
    pub height: u32,
    /// Byte ranges of the levels; index 0 is the full-size level.
    pub levels: Vec<LevelInfo>,
    /// Supercompression of the levels.
    pub supercompression: Supercompression,
    /// Key/value entries in file order (values as stored, usually NUL-terminated UTF-8).
    pub key_values: Vec<(String, Vec<u8>)>,
    /// The Basic DFD block.
    pub dfd: DfdSummary,
    /// Bytes from the start of the file to the end of the last header structure (level index, DFD,
    /// key/value data); [`read_info`] reads only these.
    pub header_len: u64,
    /// Length of the file.
    pub file_len: u64,
    /// The file on disk this was read from, as it was then ([`read_info`]; `None` for bytes in
    /// memory or a game's reader). The level reads check it: a file replaced since (a re-cook
    /// renames a new file over the old one) is an error, not the new file's bytes read at the
    /// old file's offsets and uploaded as the old texture's levels.
    pub stamp: Option<FileStamp>,
    /// The file's container: KTX2, or DDS with the header that named its format.
    pub container: Container,
    /// A Basis Universal file (`vkFormat` 0): its codec, transcoded into `format` level by level.
    /// `None` for blocks stored as the GPU takes them.
    pub basis: Option<BasisInfo>,
    /// A tiled file's layout (`mipflow cook --tiles`): its large levels are stored tile by
    /// tile, each tile one byte range ([`read_tile`]). `None` for a file stored level by level.
    pub tiles: Option<TileLayout>,
}

/// The container a streamed file came in. Both are read level by level by byte range; the
/// planner, the ledger and the streamer see only [`Ktx2Info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Container {
    /// A KTX 2.0 file.
    Ktx2,
    /// A DDS file.
    Dds(DdsHeader),
}

impl Container {
    /// A short description, for `mipflow inspect` and errors.
    pub fn describe(&self) -> String {
        match self {
            Container::Ktx2 => "KTX2".into(),
            Container::Dds(DdsHeader::Dx10 { dxgi_format }) => {
                format!("DDS (DX10 header, DXGI_FORMAT {dxgi_format})")
            }
            Container::Dds(DdsHeader::Legacy { fourcc }) => {
                format!(
                    "DDS (legacy header, FourCC {})",
                    String::from_utf8_lossy(fourcc)
                )
            }
        }
    }
}

/// What identifies a file's contents on disk without reading them: its length, its modification
/// time and, on Unix, its device and inode (a file renamed over another is a new inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// Length in bytes.
    pub len: u64,
    /// Last modification, where the file system keeps one.
    pub modified: Option<std::time::SystemTime>,
    /// Device and inode (0 and 0 off Unix).
    pub dev_ino: (u64, u64),
}

impl FileStamp {
    /// The stamp of an open file's metadata.
    pub fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let dev_ino = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let dev_ino = (0, 0);
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            dev_ino,
        }
    }
}

impl Ktx2Info {
    /// Parses and validates the header, level index, DFD and key/value data from the file's first
    /// bytes. `bytes` must hold at least [`Ktx2Info::header_len`] bytes (see [`header_region_len`]);
    /// `file_len` is the length of the whole file, against which level ranges are checked.
    ///
    /// Everything is validated before anything whose size comes from the file is allocated. Returns
    /// the first problem found; [`validate`] returns all of them.
    pub fn parse(bytes: &[u8], file_len: u64, limits: &ReadLimits) -> Result<Ktx2Info, Ktx2Error> {
        let mut v = validate(bytes, file_len, limits);
        match (v.problems.is_empty(), v.info.take()) {
            (true, Some(info)) => Ok(info),
            _ => Err(v.problems.into_iter().next().unwrap_or(Ktx2Error::BadMagic)),
        }
    }

    /// The description of a texture that comes from no file (one the caller made and made
    /// resident): no levels to read, no metadata.
    pub(crate) fn resident(format: wgpu::TextureFormat, width: u32, height: u32) -> Self {
        let (bw, bh) = format.block_dimensions();
        Self {
            format,
            width,
            height,
            levels: Vec::new(),
            supercompression: Supercompression::None,
            key_values: Vec::new(),
            dfd: DfdSummary {
                version: 0,
                color_model: 0,
                color_primaries: 0,
                transfer_function: if format.is_srgb() { 2 } else { 1 },
                premultiplied_alpha: false,
                block_dimensions: [bw, bh, 1],
                bytes_plane0: format.block_copy_size(None).unwrap_or(0) as u8,
                samples: 0,
                blocks: 0,
                channel_ids: Vec::new(),
            },
            header_len: 0,
            file_len: 0,
            stamp: None,
            container: Container::Ktx2,
            basis: None,
            tiles: None,
        }
    }

    /// Dimensions of `level` (each side halved per level, rounded down, at least 1). Levels past the
    /// end of the chain give `(1, 1)`.
    pub fn level_dims(&self, level: usize) -> (u32, u32) {
        level_dims(self.width, self.height, level)
    }

    /// Size in bytes of `level` once decompressed (the format's blocks, edge blocks padded to
    /// 4x4).
    pub fn level_size(&self, level: usize) -> u64 {
        let (w, h) = self.level_dims(level);
        format::level_size(self.format, w, h)
    }

    /// Size in bytes of `level` as the file stores it once Zstandard is undone: for a Basis
    /// file, UASTC's 16-byte 4x4 blocks (ETC1S's levels are bounded by it), else the level's
    /// GPU size ([`Self::level_size`]).
    pub fn stored_level_size(&self, level: usize) -> u64 {
        match self.basis {
            Some(_) => {
                let (w, h) = self.level_dims(level);
                format::level_size(wgpu::TextureFormat::Bc7RgbaUnorm, w, h)
            }
            None => self.level_size(level),
        }
    }

    /// For an adapter without BC compression: a Basis file transcodes to RGBA8 instead (sRGB
    /// where its DFD says so; two channels as red and green; RGBA16F for UASTC HDR). `false`
    /// (and no change) for a file of BCn blocks, which such an adapter cannot sample.
    pub fn transcode_uncompressed(&mut self) -> bool {
        if self.basis.is_none() {
            return false;
        }
        self.format = match self.format {
            wgpu::TextureFormat::Bc6hRgbUfloat => wgpu::TextureFormat::Rgba16Float,
            f if f.is_srgb() => wgpu::TextureFormat::Rgba8UnormSrgb,
            _ => wgpu::TextureFormat::Rgba8Unorm,
        };
        true
    }

    /// The value of key `key`, as stored (usually with its terminating NUL).
    pub fn key_value(&self, key: &str) -> Option<&[u8]> {
        self.key_values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// `KTXorientation`: which way the rows and columns go. Absent or not understood: the
    /// default, rows top-down and columns left to right ("rd").
    pub fn orientation(&self) -> Orientation {
        let v = self.key_value_str("KTXorientation").unwrap_or("rd");
        let mut c = v.chars();
        Orientation {
            flip_x: c.next() == Some('l'),
            flip_y: c.next() == Some('u'),
        }
    }

    /// The value of key `key` as text, without the terminating NUL; `None` if absent or not UTF-8.
    pub fn key_value_str(&self, key: &str) -> Option<&str> {
        let v = self.key_value(key)?;
        let v = v.strip_suffix(&[0]).unwrap_or(v);
        std::str::from_utf8(v).ok()
    }

    /// Width over height of the image the texture shows: its `mipflowSourceSize` (the size
    /// before `mipflow cook --resize` resampled it to whole blocks and levels, e.g. 451x300
    /// cooked as 448x320) when it has one, else its own size. What a quad drawing it should
    /// keep, whichever way the texture is loaded.
    pub fn display_aspect(&self) -> f32 {
        let source = self.key_value_str("mipflowSourceSize").and_then(|v| {
            let (w, h) = v.trim_end_matches('\0').split_once('x')?;
            Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?))
        });
        let (w, h) = source
            .filter(|&(w, h)| w > 0 && h > 0)
            .unwrap_or((self.width, self.height));
        w as f32 / h.max(1) as f32
    }
}

/// Which way a texture's rows and columns go (`KTXorientation`). mipflow never rewrites the data:
/// a renderer flips its texture coordinates instead (`u' = 1 - u` for `flip_x`, `v' = 1 - v` for
/// `flip_y`), as mipflow's own `Renderer` does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Orientation {
    /// Columns go right to left ("l").
    pub flip_x: bool,
    /// Rows go bottom to top ("u"): the first row of the data is the image's bottom.
    pub flip_y: bool,
}

/// An empty byte buffer with room for `bytes`, reserved fallibly (`None` when the memory cannot
/// be had): a level too large for the memory left is the caller's typed error, not an abort.
pub(crate) fn try_buffer(bytes: u64) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(usize::try_from(bytes).ok()?).ok()?;
    Some(v)
}

/// How many bytes of the file's start hold the header, level index, DFD and key/value data, computed
/// from the first 80 bytes. Fails if the header is unusable or declares sections beyond `limits`, so
/// that the caller can read exactly this many bytes with a bounded allocation.
pub fn header_region_len(first_bytes: &[u8], limits: &ReadLimits) -> Result<u64, Ktx2Error> {
    reader::header_region_len(first_bytes, limits)
}

/// Dimensions of mip `level` for a `width` x `height` level 0 (halved, rounded down, at least 1).
pub fn level_dims(width: u32, height: u32, level: usize) -> (u32, u32) {
    let shift = |v: u32| if level >= 32 { 1 } else { (v >> level).max(1) };
    (shift(width), shift(height))
}

/// Number of levels in a full chain down to 1x1 for a `width` x `height` image.
pub fn full_level_count(width: u32, height: u32) -> u32 {
    32 - width.max(height).max(1).leading_zeros()
}

/// A block-compressed texture in memory (any BCn format): what the cooker produces and the
/// writer stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedTexture {
    /// The block format (BC1 to BC7, BC6H).
    pub format: wgpu::TextureFormat,
    /// Width of level 0 in texels.
    pub width: u32,
    /// Height of level 0 in texels.
    pub height: u32,
    /// The blocks of each level, level 0 (full size) first.
    pub levels: Vec<Vec<u8>>,
    /// Extra key/value entries to store besides `KTXorientation`, `KTXwriter` and
    /// `KTXwriterScParams` (values as stored: add the terminating NUL for text).
    pub key_values: Vec<(String, Vec<u8>)>,
}
