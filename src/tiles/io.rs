//! The tile reader: a thread that reads and decompresses tiles off the frame's thread. The frame
//! sends requests and takes the tiles that have arrived, never waiting.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

use super::{Entry, TileSource};
use crate::ktx2::{Ktx2Info, read_tile};

/// A tile: texture, level, column, row. The texture's id carries its generation, so a tile
/// read for a removed texture never lands in the one that took its index.
pub(super) type TileKey = (super::VtId, u8, u32, u32);

struct Request {
    key: TileKey,
    info: Arc<Ktx2Info>,
    source: TileSource,
}

/// A tile read (its blocks), or why it could not be.
pub(super) struct Done {
    pub(super) key: TileKey,
    pub(super) data: crate::Result<Vec<u8>>,
}

/// The reader thread's ends, and the tiles asked for that have not arrived.
pub(super) struct TileReader {
    requests: Option<Sender<Request>>,
    done: Receiver<Done>,
    pub(super) in_flight: Vec<TileKey>,
    /// Tiles whose read failed, and the update from which they may be asked for again.
    failed: Vec<(TileKey, u64)>,
}

impl TileReader {
    pub(super) fn new() -> Self {
        let (requests, rx) = channel::<Request>();
        let (tx, done) = channel();
        // Ends when the sender is dropped (with the cache).
        let spawned = std::thread::Builder::new()
            .name("mipflow tile reader".into())
            .spawn(move || {
                for r in rx {
                    let data = Entry::read_from(&r.source, &r.info, |mut f, info| {
                        read_tile(&mut f, info, r.key.1.into(), r.key.2, r.key.3)
                    });
                    if tx.send(Done { key: r.key, data }).is_err() {
                        break;
                    }
                }
            });
        Self {
            // Without a thread (the OS refused one), no request is sent: tiles load only
            // through `make_resident`.
            requests: spawned.ok().map(|_| requests),
            done,
            in_flight: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// Tile `key` could not be read: not asked for again before update `until`.
    pub(super) fn failed(&mut self, key: TileKey, until: u64) {
        self.failed.retain(|&(k, _)| k != key);
        self.failed.push((key, until));
    }

    /// Whether tile `key` is waiting out a failed read at update `now` (ended back-offs are
    /// forgotten).
    pub(super) fn backing_off(&mut self, key: TileKey, now: u64) -> bool {
        self.failed.retain(|&(_, until)| until > now);
        self.failed.iter().any(|&(k, _)| k == key)
    }

    /// Asks for `key` unless it is already on its way; false when the reader cannot take it.
    pub(super) fn request(
        &mut self,
        key: TileKey,
        info: &Arc<Ktx2Info>,
        source: &TileSource,
    ) -> bool {
        if self.in_flight.contains(&key) {
            return true;
        }
        let Some(requests) = &self.requests else {
            return false;
        };
        let sent = requests
            .send(Request {
                key,
                info: Arc::clone(info),
                source: source.clone(),
            })
            .is_ok();
        if sent {
            self.in_flight.push(key);
        }
        sent
    }

    /// The next tile that has arrived, if any.
    pub(super) fn try_take(&mut self) -> Option<Done> {
        match self.done.try_recv() {
            Ok(d) => {
                self.in_flight.retain(|&k| k != d.key);
                Some(d)
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => None,
        }
    }
}
