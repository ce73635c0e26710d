//! `mipflow cook`'s unit tests (decoding limits, damaged images).

use super::decode::decode_error;
use super::*;
use mipflow_cook::MAX_COOK_DIMENSION;

/// A decode stopped at the limits says which limits, not only "Image size exceeds limit".
#[test]
fn a_decode_past_the_limits_names_them() {
    let limits =
        image::error::LimitError::from_kind(image::error::LimitErrorKind::InsufficientMemory);
    let said = decode_error(image::ImageError::Limits(limits), 512 << 20).to_string();
    assert!(said.contains(&MAX_COOK_DIMENSION.to_string()), "{said}");
    assert!(
        said.contains("512 MiB") && said.contains("--max-memory"),
        "{said}"
    );
    // Other decode errors keep the decoder's words.
    let other = image::ImageError::IoError(std::io::Error::other("cut short"));
    assert!(decode_error(other, 1).to_string().contains("cut short"));
}

fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 3) as u8, (y * 5) as u8, 90]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

/// A JPEG cut in half, and one whose header claims 16384x16384 over a few KB, are this
/// input's error; the whole file decodes.
#[test]
fn damaged_jpegs_are_refused_not_cooked_with_filler() {
    let path = Path::new("photo.jpg");
    let whole = jpeg(256, 192);
    assert_eq!(decode(path, &whole, 1 << 30).unwrap().width(), 256);
    let half = &whole[..whole.len() / 2];
    let said = decode(path, half, 1 << 30).unwrap_err().to_string();
    assert!(said.contains("cut short"), "{said}");
    // The frame header (SOF0: FF C0, length, precision, height, width) made to claim 16384².
    let mut big = whole.clone();
    let sof = big.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    big[sof + 5..sof + 9].copy_from_slice(&[0x40, 0x00, 0x40, 0x00]);
    let said = decode(path, &big, 1 << 40).unwrap_err().to_string();
    assert!(
        said.contains("16384x16384") && said.contains("cannot hold"),
        "{said}"
    );
}
