//! Opening a streamed file: its header region read and validated (KTX2, or DDS: [`super::dds`]),
//! from a path or any reader, and the checks that the file is still the one registered.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::reader::{HEADER_LEN, header_region_len};
use super::{FileStamp, Ktx2Error, Ktx2Info, ReadLimits};

/// Reads and validates the header region of the KTX2 file at `path` (not the level data).
pub fn read_info(path: &Path, limits: &ReadLimits) -> Result<Ktx2Info, crate::Error> {
    let io = |source| crate::Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let (mut file, meta) = open_regular(path).map_err(io)?;
    let mut info = read_info_from(&mut file, meta.len(), limits, path)?;
    info.stamp = Some(FileStamp::of(&meta));
    Ok(info)
}

/// Opens `path` for reading, refusing anything but a regular file, judged on what was opened
/// (no window for the path to change between a check and the open). On Unix the open does not
/// block: opening a FIFO for reading would wait for a writer, for ever if none comes, and the
/// IO worker with it (`O_NONBLOCK` changes nothing for a regular file's reads).
pub(crate) fn open_regular(path: &Path) -> std::io::Result<(File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a folder, a FIFO or a device)",
        ));
    }
    Ok((file, meta))
}

/// [`open_regular`] for reading the levels of `info`: the file must still be the one `info` was
/// read from ([`Ktx2Info::stamp`]; no check without one). A file replaced since has its levels
/// elsewhere, or other ones: its bytes are not the texture's.
pub(crate) fn open_checked(path: &Path, info: &Ktx2Info) -> std::io::Result<File> {
    let (file, meta) = open_regular(path)?;
    if let Some(then) = info.stamp
        && FileStamp::of(&meta) != then
    {
        return Err(std::io::Error::other(
            "the file changed since it was registered (another length, modification time or \
             inode): register it again to stream the new one",
        ));
    }
    Ok(file)
}

/// [`read_info`] from any reader of a `file_len`-byte KTX2 file (`name` in errors): a game's
/// archive or virtual file system.
pub fn read_info_from(
    file: &mut (impl Read + Seek),
    file_len: u64,
    limits: &ReadLimits,
    name: &Path,
) -> Result<Ktx2Info, crate::Error> {
    let ktx = |source| crate::Error::Ktx2 {
        path: name.to_path_buf(),
        source,
    };
    let io = |source| crate::Error::Io {
        path: name.to_path_buf(),
        source,
    };
    if file_len > limits.max_file_bytes {
        return Err(ktx(Ktx2Error::FileTooLarge {
            len: file_len,
            max: limits.max_file_bytes,
        }));
    }
    // Enough for a KTX2 header and for a whole DDS header (with its DX10 extension).
    let first_len = HEADER_LEN.max(super::dds::DX10_HEADER_LEN);
    let mut first = Vec::with_capacity(first_len as usize);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.take(first_len).read_to_end(&mut first).map_err(io)?;
    if super::dds::is_dds(&first) {
        return super::dds::parse(&first, file_len, limits).map_err(ktx);
    }
    let region = header_region_len(&first, limits)
        .map_err(ktx)?
        .min(file_len);
    let mut bytes = Vec::with_capacity(region as usize);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.take(region).read_to_end(&mut bytes).map_err(io)?;
    Ktx2Info::parse(&bytes, file_len, limits).map_err(ktx)
}
