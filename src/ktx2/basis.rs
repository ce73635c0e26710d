//! Basis Universal in KTX2 (`vkFormat` 0): UASTC LDR (raw or Zstandard) and ETC1S (BasisLZ),
//! transcoded level by level on the IO workers into the BCn format the GPU gets. The planner, the
//! ledger and the streamer see an ordinary [`Ktx2Info`] whose `format` is that BCn format; only
//! the level read ([`super::read_level`]) knows where the blocks came from.
//!
//! - Colour (UASTC RGB/RGBA, ETC1S RGB or RGB + alpha): BC7, sRGB where the DFD's transfer
//!   function says so.
//! - Two channels, as the DFD declares them (UASTC `RRRG` or `RG`, ETC1S `RRR` + `GGG`: a normal
//!   map): BC5.
//! - UASTC HDR 4x4 (`vkFormat` ASTC 4x4 SFLOAT with the UASTC HDR DFD model): BC6H (unsigned).
//! - On an adapter without BC: RGBA8 (RGBA16F for HDR) instead
//!   ([`Ktx2Info::transcode_uncompressed`]).
//!
//! Every target has 16-byte blocks, as UASTC has: a UASTC level's stored size is its GPU size.
//! ETC1S's global codebooks (the file's supercompression global data) are decoded once, when the
//! file is registered, and shared by the workers ([`Arc`]).
//!
//! The transcoder is the `basisu` crate (a port of Binomial's reference transcoder), through its
//! per-level functions, pinned to one version because they are outside its semver promise. Every
//! size it is given is checked here first, and a transcode runs under `catch_unwind`: a hostile
//! level is a [`Ktx2Error`], never a panic or an allocation sized by the file.

use std::sync::Arc;

use basisu::basislz::etc1s::Etc1sTranscoder;
use basisu::{DecodeFlags, TargetFormat};

use super::bytes::le_u32;
use super::{BlockFormat, DfdSummary, Ktx2Error, Ktx2Info, LevelInfo, Supercompression};

/// `KHR_DF_MODEL_ETC1S`.
pub(super) const MODEL_ETC1S: u8 = 163;
/// `KHR_DF_MODEL_UASTC`.
pub(super) const MODEL_UASTC: u8 = 166;
/// `KHR_DF_MODEL_UASTC_HDR` (4x4).
const MODEL_UASTC_HDR: u8 = 167;
/// `VK_FORMAT_ASTC_4x4_SFLOAT_BLOCK`: a UASTC HDR 4x4 file's `vkFormat` (its blocks are ASTC's).
pub(super) const VK_FORMAT_ASTC_4X4_SFLOAT: u32 = 1_000_066_000;

/// The Basis codec of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BasisCodec {
    /// UASTC LDR 4x4 (raw or Zstandard).
    Uastc,
    /// ETC1S with BasisLZ supercompression.
    Etc1s,
    /// UASTC HDR 4x4 (raw or Zstandard).
    UastcHdr,
}

/// The channels the DFD declares, which choose the GPU format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BasisChannels {
    /// Colour, no alpha (UASTC `RGB`, ETC1S `RGB`), or one grey channel (`RRR`): BC7.
    Rgb,
    /// Colour and alpha (UASTC `RGBA`, ETC1S `RGB` + `AAA`): BC7.
    Rgba,
    /// Two channels (UASTC `RRRG` with green in alpha or `RG`, ETC1S `RRR` + `GGG`): BC5.
    Rg {
        /// The second channel is stored in alpha (UASTC `RRRG`, ETC1S's second slice).
        green_in_alpha: bool,
    },
}

/// What a Basis file needs to be transcoded, kept in its [`Ktx2Info`].
#[derive(Clone)]
pub struct BasisInfo {
    /// The codec.
    pub codec: BasisCodec,
    /// The channels, which chose the GPU format.
    pub channels: BasisChannels,
    /// ETC1S only: the codebooks and each level's slices, decoded once.
    etc1s: Option<Arc<Etc1sGlobal>>,
}

impl std::fmt::Debug for BasisInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasisInfo")
            .field("codec", &self.codec)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl PartialEq for BasisInfo {
    fn eq(&self, other: &Self) -> bool {
        self.codec == other.codec
            && self.channels == other.channels
            && match (&self.etc1s, &other.etc1s) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl BasisInfo {
    /// A short description, for `mipflow inspect`: "UASTC (RGBA)", "ETC1S (two channels)".
    pub fn describe(&self) -> String {
        let codec = match self.codec {
            BasisCodec::Uastc => "Basis UASTC",
            BasisCodec::Etc1s => "Basis ETC1S (BasisLZ)",
            BasisCodec::UastcHdr => "Basis UASTC HDR",
        };
        let channels = match self.channels {
            BasisChannels::Rgb => "RGB",
            BasisChannels::Rgba => "RGBA",
            BasisChannels::Rg { .. } => "two channels",
        };
        format!("{codec}, {channels}")
    }
}

/// The codebooks of an ETC1S file and each level's slices (offsets within the level).
struct Etc1sGlobal {
    codebooks: Etc1sTranscoder,
    /// Per level: RGB slice (offset, length), alpha slice (offset, length; length 0 = none).
    slices: Vec<[(u32, u32); 2]>,
}

fn bad_dfd(reason: impl Into<String>) -> Ktx2Error {
    Ktx2Error::BadDfd {
        reason: reason.into(),
    }
}

/// What a `vkFormat` 0 file holds, from its DFD and supercompression scheme: the Basis codec, the
/// channels, and the BCn format the GPU gets. The ETC1S codebooks come later ([`attach_global`]).
pub(super) fn describe(
    dfd: &DfdSummary,
    supercompression: Supercompression,
    vk_format: u32,
) -> Result<(BasisInfo, &'static BlockFormat), Ktx2Error> {
    let ids = &dfd.channel_ids;
    let hdr = dfd.color_model == MODEL_UASTC_HDR;
    if hdr != (vk_format == VK_FORMAT_ASTC_4X4_SFLOAT) {
        return Err(Ktx2Error::UnsupportedBasis {
            what: format!(
                "vkFormat {vk_format} with DFD colour model {} (UASTC HDR is vkFormat {} with \
                 model 167; UASTC and ETC1S are vkFormat 0)",
                dfd.color_model, VK_FORMAT_ASTC_4X4_SFLOAT
            ),
        });
    }
    let (codec, channels) = match dfd.color_model {
        MODEL_UASTC => {
            if supercompression == Supercompression::BasisLz {
                return Err(bad_dfd(
                    "UASTC with BasisLZ supercompression (BasisLZ is ETC1S's)",
                ));
            }
            let channels = match ids.first() {
                Some(0 | 4) => BasisChannels::Rgb,
                Some(3) => BasisChannels::Rgba,
                Some(5) => BasisChannels::Rg {
                    green_in_alpha: true,
                },
                Some(6) => BasisChannels::Rg {
                    green_in_alpha: false,
                },
                other => {
                    return Err(bad_dfd(format!(
                        "UASTC channel id {other:?}, expected 0, 3, 4, 5 or 6"
                    )));
                }
            };
            (BasisCodec::Uastc, channels)
        }
        MODEL_ETC1S => {
            if supercompression != Supercompression::BasisLz {
                return Err(bad_dfd("ETC1S without BasisLZ supercompression (scheme 1)"));
            }
            let channels = match ids.as_slice() {
                [0] | [3] => BasisChannels::Rgb,
                [0, 15] => BasisChannels::Rgba,
                [3, 4] => BasisChannels::Rg {
                    green_in_alpha: true,
                },
                other => {
                    return Err(bad_dfd(format!(
                        "ETC1S channel ids {other:?}, expected [0], [3], [0, 15] or [3, 4]"
                    )));
                }
            };
            (BasisCodec::Etc1s, channels)
        }
        MODEL_UASTC_HDR => {
            if supercompression == Supercompression::BasisLz {
                return Err(bad_dfd("UASTC HDR with BasisLZ supercompression"));
            }
            (BasisCodec::UastcHdr, BasisChannels::Rgb)
        }
        model => {
            return Err(Ktx2Error::UnsupportedBasis {
                what: format!(
                    "vkFormat 0 with DFD colour model {model} (neither ETC1S 163 nor UASTC 166)"
                ),
            });
        }
    };
    let srgb = dfd.transfer_function == 2;
    let vk = match (channels, srgb) {
        _ if hdr => 143,
        (BasisChannels::Rg { .. }, _) => 141,
        (_, true) => super::VK_FORMAT_BC7_SRGB,
        (_, false) => super::VK_FORMAT_BC7_UNORM,
    };
    let format = BlockFormat::from_vk(vk).expect("in the table");
    Ok((
        BasisInfo {
            codec,
            channels,
            etc1s: None,
        },
        format,
    ))
}

/// Decodes an ETC1S file's global data (`sgd`: codebooks, Huffman tables, one image descriptor per
/// level) once, checks every level's slices against its byte range, and keeps it in `basis`.
pub(super) fn attach_global(
    basis: &mut BasisInfo,
    sgd: &[u8],
    levels: &[LevelInfo],
) -> Result<(), Ktx2Error> {
    let bad = |reason: String| Ktx2Error::BadBasisGlobal { reason };
    let field = |off: u64| le_u32(sgd, off).ok_or_else(|| bad(format!("truncated at byte {off}")));
    let counts = field(0)?;
    let (endpoints, selectors) = (counts & 0xFFFF, counts >> 16);
    let (e_len, s_len, t_len, x_len) = (field(4)?, field(8)?, field(12)?, field(16)?);
    let n = levels.len() as u64;
    let descs_end = 20 + 20 * n;
    let needed =
        descs_end + u64::from(e_len) + u64::from(s_len) + u64::from(t_len) + u64::from(x_len);
    if needed != sgd.len() as u64 {
        return Err(bad(format!(
            "{} bytes, but its header and {n} image descriptors declare {needed}",
            sgd.len()
        )));
    }
    if endpoints == 0 || selectors == 0 {
        return Err(bad(format!(
            "{endpoints} endpoints and {selectors} selectors"
        )));
    }
    let mut slices = Vec::with_capacity(levels.len());
    for (level, l) in levels.iter().enumerate() {
        let at = 20 + 20 * level as u64;
        let flags = field(at)?;
        if flags & 0x2 != 0 {
            return Err(Ktx2Error::UnsupportedBasis {
                what: format!("a video P-frame at level {level} (ETC1S animation)"),
            });
        }
        let rgb = (field(at + 4)?, field(at + 8)?);
        let alpha = (field(at + 12)?, field(at + 16)?);
        for (what, (off, len)) in [("RGB", rgb), ("alpha", alpha)] {
            if u64::from(off) + u64::from(len) > l.byte_length {
                return Err(bad(format!(
                    "level {level}'s {what} slice ({len} bytes at {off}) runs past its {} bytes",
                    l.byte_length
                )));
            }
        }
        if rgb.1 == 0 {
            return Err(bad(format!("level {level} has an empty RGB slice")));
        }
        let two_slices = matches!(
            basis.channels,
            BasisChannels::Rgba | BasisChannels::Rg { .. }
        );
        if two_slices != (alpha.1 != 0) {
            return Err(bad(format!(
                "level {level}: an alpha slice of {} bytes for a DFD with {} slice(s)",
                alpha.1,
                if two_slices { 2 } else { 1 }
            )));
        }
        slices.push([rgb, alpha]);
    }
    let section = |from: u64, len: u32| &sgd[from as usize..(from + u64::from(len)) as usize];
    let e = section(descs_end, e_len);
    let s = section(descs_end + u64::from(e_len), s_len);
    let t = section(descs_end + u64::from(e_len) + u64::from(s_len), t_len);
    let decoded = std::panic::catch_unwind(|| {
        let mut c = Etc1sTranscoder::new();
        (c.decode_palettes(endpoints, e, selectors, s) && c.decode_tables(t)).then_some(c)
    });
    let codebooks = match decoded {
        Ok(Some(c)) => c,
        Ok(None) => return Err(bad("the codebooks or Huffman tables do not decode".into())),
        Err(_) => return Err(bad("the codebooks' decoder panicked".into())),
    };
    basis.etc1s = Some(Arc::new(Etc1sGlobal { codebooks, slices }));
    Ok(())
}

/// Transcodes level `level` of a Basis file from its stored bytes (`data`: the level's byte
/// range, Zstandard already undone) into `info.format`'s blocks.
pub(super) fn transcode(
    info: &Ktx2Info,
    basis: &BasisInfo,
    level: usize,
    data: &[u8],
) -> Result<Vec<u8>, Ktx2Error> {
    let (w, h) = info.level_dims(level);
    let (bx, by) = (w.div_ceil(4), h.div_ceil(4));
    let size = info.level_size(level);
    let stored = info.stored_level_size(level);
    let fail = |reason: &str| Ktx2Error::Transcode {
        level,
        reason: reason.to_owned(),
    };
    let mut out = super::reader::level_buffer(level, size)?;
    out.resize(size as usize, 0);
    let rgba = matches!(
        info.format,
        wgpu::TextureFormat::Rgba8Unorm
            | wgpu::TextureFormat::Rgba8UnormSrgb
            | wgpu::TextureFormat::Rgba16Float
    );
    let target = match (rgba, basis.channels) {
        _ if basis.codec == BasisCodec::UastcHdr && rgba => TargetFormat::RgbaHalf,
        _ if basis.codec == BasisCodec::UastcHdr => TargetFormat::Bc6h,
        (true, _) => TargetFormat::Rgba32,
        (false, BasisChannels::Rg { .. }) => TargetFormat::Bc5Rg,
        (false, _) => TargetFormat::Bc7Rgba,
    };
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match basis.codec {
        BasisCodec::UastcHdr => {
            if data.len() as u64 != stored {
                return Some(Err(Ktx2Error::LevelSizeMismatch {
                    level,
                    what: "UASTC HDR data",
                    expected: stored,
                    found: data.len() as u64,
                }));
            }
            basisu::dispatch::transcode_uastc_hdr(data, bx, by, w, h, target.as_i32(), &mut out)
                .map(Ok)
        }
        BasisCodec::Uastc => {
            if data.len() as u64 != stored {
                return Some(Err(Ktx2Error::LevelSizeMismatch {
                    level,
                    what: "UASTC data",
                    expected: stored,
                    found: data.len() as u64,
                }));
            }
            if !rgba
                && basis.channels
                    == (BasisChannels::Rg {
                        green_in_alpha: false,
                    })
            {
                // `RG`: green in G, which the crate's BC5 (red and alpha) does not read.
                for (src, dst) in data.chunks_exact(16).zip(out.chunks_exact_mut(16)) {
                    let block = basisu::uastc::bc3_bc5::transcode_uastc_to_bc5(
                        src.try_into().ok()?,
                        false,
                        0,
                        1,
                    )?;
                    dst.copy_from_slice(&block);
                }
                return Some(Ok(()));
            }
            let alpha = basis.channels != BasisChannels::Rgb;
            basisu::dispatch::transcode_uastc(
                data,
                alpha,
                bx,
                by,
                w,
                h,
                target.as_i32(),
                DecodeFlags::HIGH_QUALITY.bits(),
                &mut out,
            )
            .map(Ok)
        }
        BasisCodec::Etc1s => {
            let global = basis.etc1s.as_ref()?;
            let [(ro, rl), (ao, al)] = *global.slices.get(level)?;
            let rgb = data.get(ro as usize..(ro as usize).checked_add(rl as usize)?)?;
            let alpha = if al > 0 {
                Some(data.get(ao as usize..(ao as usize).checked_add(al as usize)?)?)
            } else {
                None
            };
            basisu::dispatch::transcode_etc1s(
                &global.codebooks,
                rgb,
                alpha,
                bx,
                by,
                w,
                h,
                target.as_i32(),
                DecodeFlags::NO_ETC1S_CHROMA_FILTERING.bits(),
                None,
                &mut out,
            )
            .map(Ok)
        }
    }));
    match done {
        Ok(Some(Ok(()))) => {
            if rgba
                && basis.channels
                    == (BasisChannels::Rg {
                        green_in_alpha: true,
                    })
            {
                // Two channels as red and green: the second comes out in alpha.
                for p in out.chunks_exact_mut(4) {
                    (p[1], p[2], p[3]) = (p[3], 0, 255);
                }
            }
            Ok(out)
        }
        Ok(Some(Err(e))) => Err(e),
        Ok(None) => Err(fail(
            "the transcoder refused the level's blocks (corrupt data)",
        )),
        Err(_) => Err(fail("the transcoder panicked on the level's blocks")),
    }
}
