//! The Data Format Descriptor and the key/value data of a KTX2 file, parsed and checked.

use super::bytes::{le_u32, slice};
use super::*;

/// `KHR_DF_TRANSFER_LINEAR`.
const DF_TRANSFER_LINEAR: u8 = 1;
/// `KHR_DF_TRANSFER_SRGB`.
const DF_TRANSFER_SRGB: u8 = 2;

/// Parses the DFD section (starting at its `dfdTotalSize` field) and checks it describes `format`
/// (its colour model, 4x4 blocks of its size, the transfer function its sRGB-ness implies).
/// `bytesPlane0` may be 0 in a supercompressed file (older writers store 0 there, as the spec
/// asks for BasisLZ).
pub(super) fn parse_dfd(
    section: &[u8],
    format: Option<&BlockFormat>,
    supercompressed: bool,
    problems: &mut Vec<Ktx2Error>,
) -> Option<DfdSummary> {
    let len = section.len() as u64;
    let total = le_u32(section, 0)?;
    if u64::from(total) != len {
        problems.push(Ktx2Error::DfdMismatch {
            field: "dfdTotalSize",
            expected: len,
            found: total.into(),
        });
        return None;
    }
    let mut off = 4u64;
    let mut basic: Option<(u16, &[u8])> = None;
    let mut blocks = 0usize;
    while off < len {
        let (Some(w0), Some(w1)) = (le_u32(section, off), le_u32(section, off + 4)) else {
            problems.push(Ktx2Error::BadDfd {
                reason: format!("descriptor block header truncated at byte {off}"),
            });
            return None;
        };
        let vendor = w0 & 0x1_FFFF;
        let dtype = w0 >> 17;
        let version = (w1 & 0xFFFF) as u16;
        let size = u64::from(w1 >> 16);
        if size < 8 || off + size > len {
            problems.push(Ktx2Error::BadDfd {
                reason: format!(
                    "descriptor block at byte {off} declares {size} bytes, which do not fit"
                ),
            });
            return None;
        }
        blocks += 1;
        if vendor == 0 && dtype == 0 && basic.is_none() {
            basic = Some((version, slice(section, off, size)?));
        }
        off += size;
    }
    let Some((version, b)) = basic else {
        problems.push(Ktx2Error::BadDfd {
            reason: "no Basic descriptor block".into(),
        });
        return None;
    };
    let mut ok = true;
    let mut mismatch = |field, expected: u64, found: u64| {
        if expected != found {
            problems.push(Ktx2Error::DfdMismatch {
                field,
                expected,
                found,
            });
            ok = false;
        }
    };
    mismatch("versionNumber", 2, version.into());
    let size = b.len() as u64;
    if size < 24 || !(size - 24).is_multiple_of(16) {
        problems.push(Ktx2Error::BadDfd {
            reason: format!(
                "Basic block of {size} bytes is not 24 bytes plus whole 16-byte samples"
            ),
        });
        return None;
    }
    let samples = ((size - 24) / 16) as usize;
    let field = |i: usize| u64::from(b.get(i).copied().unwrap_or(0));
    // One sample (BC1, BC4, BC6H, BC7) or two (BC2, BC3: alpha and colour; BC5: red and
    // green); four at most from any writer. Reported after the field checks (a range, which
    // `DfdMismatch`'s one expected value cannot say).
    let bad_sample_count = !(1..=4).contains(&samples);
    if let Some(format) = format {
        mismatch("colorModel", format.color_model.into(), field(8));
        let expected = if format.is_srgb() {
            DF_TRANSFER_SRGB
        } else {
            DF_TRANSFER_LINEAR
        };
        mismatch("transferFunction", expected.into(), field(10));
        if !(supercompressed && field(16) == 0) {
            mismatch("bytesPlane0", format.block_bytes.into(), field(16));
        }
    }
    mismatch("texelBlockDimension0", 3, field(12));
    mismatch("texelBlockDimension1", 3, field(13));
    mismatch("texelBlockDimension2", 0, field(14));
    mismatch("texelBlockDimension3", 0, field(15));
    let other_planes = (17..24).map(field).max().unwrap_or(0);
    mismatch("bytesPlane1..7", 0, other_planes);
    if bad_sample_count {
        problems.push(Ktx2Error::BadDfd {
            reason: format!("the Basic block has {samples} samples, expected 1 to 4"),
        });
        ok = false;
    }
    // Each sample lies inside the block.
    let block_bits = format.map_or(128, |f| u64::from(f.block_bytes) * 8);
    for k in 0..samples {
        let at = 24 + 16 * k;
        let offset = field(at) | (field(at + 1) << 8);
        let length = field(at + 2) + 1;
        if offset + length > block_bits {
            problems.push(Ktx2Error::BadDfd {
                reason: format!(
                    "sample {k} ends at bit {} (bitOffset + bitLength), past the {block_bits}-bit \
                     block",
                    offset + length
                ),
            });
            ok = false;
            break;
        }
    }
    ok.then(|| DfdSummary {
        version,
        color_model: field(8) as u8,
        color_primaries: field(9) as u8,
        transfer_function: field(10) as u8,
        premultiplied_alpha: field(11) & 1 != 0,
        block_dimensions: [
            field(12) as u32 + 1,
            field(13) as u32 + 1,
            field(14) as u32 + 1,
        ],
        bytes_plane0: field(16) as u8,
        samples,
        blocks,
        channel_ids: (0..samples)
            .map(|k| (field(24 + 16 * k + 3) & 0xF) as u8)
            .collect(),
    })
}

/// One key/value entry: key, value (as stored), offset of the next entry.
type Entry<'a> = (&'a str, &'a [u8], u64);

pub(super) fn next_entry(section: &[u8], off: u64) -> Result<Entry<'_>, String> {
    let len = section.len() as u64;
    let Some(klen) = le_u32(section, off) else {
        return Err(format!(
            "{} trailing bytes, too short for a length field",
            len - off
        ));
    };
    let klen = u64::from(klen);
    if klen == 0 {
        return Err("zero-length entry".into());
    }
    let Some(entry) = slice(section, off + 4, klen) else {
        return Err(format!(
            "entry of {klen} bytes runs past the end of the section"
        ));
    };
    let Some(nul) = entry.iter().position(|&c| c == 0) else {
        return Err("key is not NUL-terminated".into());
    };
    let key =
        std::str::from_utf8(&entry[..nul]).map_err(|_| "key is not valid UTF-8".to_string())?;
    if key.is_empty() {
        return Err("empty key".into());
    }
    // The last entry's padding may be left out by lax writers; accept that.
    let next = (off + 4 + klen).next_multiple_of(4).min(len);
    Ok((key, &entry[nul + 1..], next))
}

pub(super) fn parse_kvd(
    section: &[u8],
    base: u64,
    limits: &ReadLimits,
    problems: &mut Vec<Ktx2Error>,
) -> Option<Vec<(String, Vec<u8>)>> {
    // First pass: validate and count, allocating nothing.
    let len = section.len() as u64;
    let mut off = 0u64;
    let mut count = 0usize;
    let mut prev: Option<&str> = None;
    while off < len {
        let fail = |reason: String| Ktx2Error::BadKeyValue {
            offset: base + off,
            reason,
        };
        match next_entry(section, off) {
            Ok((key, _, next)) => {
                if let Some(p) = prev {
                    if key == p {
                        problems.push(fail(format!("duplicate key {key:?}")));
                        return None;
                    }
                    if key < p {
                        problems.push(fail(format!("keys are not sorted ({key:?} after {p:?})")));
                        return None;
                    }
                }
                count += 1;
                if count > limits.max_key_values {
                    problems.push(fail(format!("more than {} entries", limits.max_key_values)));
                    return None;
                }
                prev = Some(key);
                off = next;
            }
            Err(reason) => {
                problems.push(fail(reason));
                return None;
            }
        }
    }
    // Second pass: build.
    let mut out = Vec::with_capacity(count);
    let mut off = 0u64;
    while off < len {
        let (key, value, next) = next_entry(section, off).ok()?;
        out.push((key.to_string(), value.to_vec()));
        off = next;
    }
    Some(out)
}
