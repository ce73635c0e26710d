//! Little-endian fields and ranges of a file's bytes, checked: `None` past the end.

/// The `u32` at `off`.
pub(super) fn le_u32(b: &[u8], off: u64) -> Option<u32> {
    let off = usize::try_from(off).ok()?;
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes(s.try_into().ok()?))
}

/// The `u64` at `off`.
pub(super) fn le_u64(b: &[u8], off: u64) -> Option<u64> {
    let off = usize::try_from(off).ok()?;
    let s = b.get(off..off.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

/// The `len` bytes at `offset`.
pub(super) fn slice(b: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = usize::try_from(offset.checked_add(len)?).ok()?;
    b.get(start..end)
}

/// `data` past its leading Zstandard skippable frames (magic `0x184D2A50` to `0x184D2A5F`, a
/// 4-byte size, that many bytes: RFC 8878 section 3.1.2), where the first frame with content
/// starts; `None` when a skippable frame runs past the end. A level may be stored so (valid per
/// the RFC), and a skippable frame states a content size of 0, which the size check must not
/// take for the level's.
pub(super) fn past_skippable_frames(mut data: &[u8]) -> Option<&[u8]> {
    while let Some(magic) = le_u32(data, 0)
        && magic & 0xFFFF_FFF0 == 0x184D_2A50
    {
        let size = u64::from(le_u32(data, 4)?);
        let start = usize::try_from(8 + size).ok()?;
        data = data.get(start..)?;
    }
    Some(data)
}
