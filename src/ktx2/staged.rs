//! Reading a level into a destination that is not a `Vec` (mapped staging memory): the IO
//! workers' path straight into the upload ring.

use std::io::{Read, Seek, SeekFrom};

use super::reader::{level_buffer, level_span};
use super::{Ktx2Error, Ktx2Info, Supercompression};

/// Reads level `level` as [`super::read_level`] does, but hands its bytes (decompressed) to `sink` in
/// order, through `bounce` (a small buffer that stays in the CPU's caches), instead of
/// returning them: for a destination that is not a `Vec` (mapped staging memory). `sink`
/// returns false when given more bytes than the level has. The bytes reach `sink` only as far
/// as they were read: on an error, what it got is not the whole level.
pub fn read_level_with(
    file: &mut (impl Read + Seek),
    info: &Ktx2Info,
    level: usize,
    bounce: &mut [u8],
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), Ktx2Error> {
    if transcoded(info, level) {
        return whole(super::read_level(file, info, level)?, level, sink);
    }
    let (l, expected, end) = level_span(info, level)?;
    if bounce.is_empty() {
        return Err(Ktx2Error::OutOfMemory { level, bytes: 1 });
    }
    file.seek(SeekFrom::Start(l.offset))?;
    let too_long = |found: u64| Ktx2Error::DecompressedSize {
        level,
        expected,
        found,
    };
    match info.supercompression {
        Supercompression::None => {
            let mut src = file.take(l.byte_length);
            let got = pump(&mut src, bounce, sink).map_err(|e| {
                e.map_or_else(|| too_long(expected.saturating_add(1)), Ktx2Error::from)
            })?;
            if got < l.byte_length {
                return Err(Ktx2Error::Truncated {
                    what: "level data",
                    needed: end,
                    available: l.offset + got,
                });
            }
        }
        Supercompression::Zstd | Supercompression::BasisLz => {
            let mut data = level_buffer(level, l.byte_length)?;
            file.take(l.byte_length).read_to_end(&mut data)?;
            if (data.len() as u64) < l.byte_length {
                return Err(Ktx2Error::Truncated {
                    what: "level data",
                    needed: end,
                    available: l.offset + data.len() as u64,
                });
            }
            decode(&data, level, expected, bounce, sink)?;
        }
    }
    Ok(())
}

/// [`read_level_with`] for a KTX2 file already in memory (`file`, the whole file): the level's
/// bytes go to `sink` straight from `file` (`bounce` only serves a Zstandard decode), so they are
/// copied once.
pub fn read_level_in(
    file: &[u8],
    info: &Ktx2Info,
    level: usize,
    bounce: &mut [u8],
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), Ktx2Error> {
    if transcoded(info, level) {
        let out = super::read_level(&mut std::io::Cursor::new(file), info, level)?;
        return whole(out, level, sink);
    }
    let (l, expected, end) = level_span(info, level)?;
    let Some(data) = usize::try_from(l.offset)
        .ok()
        .zip(usize::try_from(end).ok())
        .and_then(|(a, b)| file.get(a..b))
    else {
        return Err(Ktx2Error::Truncated {
            what: "level data",
            needed: end,
            available: file.len() as u64,
        });
    };
    match info.supercompression {
        Supercompression::None => {
            if !sink(data) {
                return Err(Ktx2Error::DecompressedSize {
                    level,
                    expected,
                    found: data.len() as u64,
                });
            }
            Ok(())
        }
        Supercompression::Zstd | Supercompression::BasisLz => {
            decode(data, level, expected, bounce, sink)
        }
    }
}

/// A Basis file's level is transcoded whole ([`super::read_level`]), then handed over; so is a
/// tiled level, put back in row order.
fn transcoded(info: &Ktx2Info, level: usize) -> bool {
    info.basis.is_some()
        || info.supercompression == Supercompression::BasisLz
        || info
            .tiles
            .as_ref()
            .is_some_and(|t| level < usize::from(t.tiled_levels))
}

/// Hands a whole level to `sink`.
fn whole(
    level_bytes: Vec<u8>,
    level: usize,
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), Ktx2Error> {
    if sink(&level_bytes) {
        Ok(())
    } else {
        Err(Ktx2Error::DecompressedSize {
            level,
            expected: level_bytes.len() as u64,
            found: level_bytes.len() as u64,
        })
    }
}

/// Decodes a Zstandard level of `expected` bytes to `sink` through `bounce`, checking the size
/// its frame states and the size it decodes to.
pub(super) fn decode(
    data: &[u8],
    level: usize,
    expected: u64,
    bounce: &mut [u8],
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), Ktx2Error> {
    let fail = |reason: String| Ktx2Error::Decompress { level, reason };
    let too_long = |found: u64| Ktx2Error::DecompressedSize {
        level,
        expected,
        found,
    };
    if bounce.is_empty() {
        return Err(Ktx2Error::OutOfMemory { level, bytes: 1 });
    }
    // The decoder skips skippable frames itself; the size check needs the first real one.
    let data = super::bytes::past_skippable_frames(data)
        .ok_or_else(|| fail("a skippable frame runs past the level's end".into()))?;
    match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(Some(n)) if n != expected => return Err(too_long(n)),
        Ok(_) => {}
        Err(e) => return Err(fail(e.to_string())),
    }
    let decoder =
        zstd::stream::read::Decoder::with_buffer(data).map_err(|e| fail(e.to_string()))?;
    // One byte more than expected: a level that decodes too long is found.
    let mut src = decoder.take(expected.saturating_add(1));
    let got = pump(&mut src, bounce, sink).map_err(|e| {
        e.map_or_else(
            || too_long(expected.saturating_add(1)),
            |e| fail(e.to_string()),
        )
    })?;
    if got != expected {
        return Err(too_long(got));
    }
    Ok(())
}

/// Copies `src` to `sink` through `bounce`; the bytes copied, or the read's error (`None`: the
/// sink refused more bytes).
fn pump(
    src: &mut impl Read,
    bounce: &mut [u8],
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<u64, Option<std::io::Error>> {
    let mut got = 0u64;
    loop {
        let n = match src.read(bounce) {
            Ok(0) => return Ok(got),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Some(e)),
        };
        if !sink(&bounce[..n]) {
            return Err(None);
        }
        got += n as u64;
    }
}
