//! Decoding a cook's inputs: the size from the header alone, the decode under the cook's limits,
//! and the errors that name those limits.

use std::path::Path;

use std::io::Cursor;

use mipflow_cook::{CookError, MAX_COOK_DIMENSION, probe_alloc};

/// An image's size from its header, without decoding it (`None` when the header cannot tell).
pub(super) fn header_dims(path: &Path, bytes: &[u8]) -> Option<(u32, u32)> {
    image_reader(path, bytes).ok()?.into_dimensions().ok()
}

/// An image reader over `bytes`, its format guessed from the signature or, for TGA (which has
/// none), from `path`'s extension.
fn image_reader<'a>(
    path: &Path,
    bytes: &'a [u8],
) -> std::io::Result<image::ImageReader<Cursor<&'a [u8]>>> {
    let mut reader = image::ImageReader::new(Cursor::new(bytes)).with_guessed_format()?;
    if reader.format().is_none()
        && let Ok(format) = image::ImageFormat::from_path(path)
    {
        reader.set_format(format);
    }
    Ok(reader)
}

/// Decodes `bytes` with limits: each side at most [`MAX_COOK_DIMENSION`], and no allocation
/// above `max_memory` (which the header's estimate checked already where the header could be
/// read: the decode is a part of the cook's working set): a decoder's allocation failure is this
/// input's error. No fixed cap besides: a 16384² OpenEXR decodes to 4 GiB of floats, and a
/// `--max-memory` that allows its cook allows that.
pub(super) fn decode(
    path: &Path,
    bytes: &[u8],
    max_memory: u64,
) -> Result<image::DynamicImage, CookError> {
    let mut reader =
        image_reader(path, bytes).map_err(|e| CookError::Decode(image::ImageError::IoError(e)))?;
    if reader.format() == Some(image::ImageFormat::Jpeg) {
        let dims = image_reader(path, bytes)
            .ok()
            .and_then(|r| r.into_dimensions().ok());
        check_jpeg(bytes, dims)?;
    }
    // The decoder's own buffer cannot fail softly: whether it could be had is asked first.
    let decoded = image_reader(path, bytes)
        .ok()
        .and_then(|r| r.into_decoder().ok())
        .map(|d| image::ImageDecoder::total_bytes(&d));
    if let Some(total) = decoded {
        probe_alloc(total, "the decoded image")?;
    }
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_COOK_DIMENSION);
    limits.max_image_height = Some(MAX_COOK_DIMENSION);
    limits.max_alloc = Some(max_memory);
    reader.limits(limits);
    reader.decode().map_err(|e| decode_error(e, max_memory))
}

/// What the JPEG decoder does not say: a file cut short (no end-of-image marker: the decoder
/// fills the missing rows with grey and reports success), and a header that claims more pixels
/// than the file can hold (every 8x8 block of a JPEG costs at least a bit; a 62 KB file said
/// 16384x16384 and decoded to 2 GB of filler).
fn check_jpeg(bytes: &[u8], dims: Option<(u32, u32)>) -> Result<(), CookError> {
    // The end-of-image marker, allowing some trailing bytes after it (some writers append).
    let tail = &bytes[bytes.len().saturating_sub(64 << 10)..];
    if !tail.windows(2).any(|w| w == [0xFF, 0xD9]) {
        return Err(CookError::Damaged(format!(
            "the JPEG data ends without its end-of-image marker: the file is cut short ({} \
             bytes)",
            bytes.len()
        )));
    }
    if let Some((w, h)) = dims {
        let blocks = u64::from(w.div_ceil(8)) * u64::from(h.div_ceil(8));
        let bits = bytes.len() as u64 * 8;
        if bits < blocks {
            return Err(CookError::Damaged(format!(
                "its header says {w}x{h} ({blocks} blocks of 8x8), which {} bytes cannot hold",
                bytes.len()
            )));
        }
    }
    Ok(())
}

/// The cook's error for a decoder's: its limits named where it stopped at them.
pub(super) fn decode_error(e: image::ImageError, max_memory: u64) -> CookError {
    match e {
        image::ImageError::Limits(_) => CookError::DecodeLimits {
            max_side: MAX_COOK_DIMENSION,
            max_memory,
        },
        e => CookError::Decode(e),
    }
}
