//! The headless report (JSON): the library's budget-test report ([`mipflow::harness::Report`]),
//! one owner for `mipflow headless` and a game's own tests. Its fields are a contract,
//! documented in the guide: add, never rename.

pub use mipflow::harness::{
    ActRecord, EventRecord, FrameRecord, RSS_EVERY, Report, SkippedTexture, UnreadableTexture,
    rss_bytes,
};
