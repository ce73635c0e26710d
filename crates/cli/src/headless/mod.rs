//! Headless budget runs for CI: scenarios (camera path, budget schedule, assertions), a runner, a
//! JSON report, a PNG plot and a verdict.

pub mod plot;
pub mod report;
pub mod runner;
pub mod scenario;

pub use plot::write_plot;
pub use report::{ActRecord, EventRecord, FrameRecord, Report, SkippedTexture, UnreadableTexture};
pub use runner::{RunOptions, monitor_line, run};
pub use scenario::Scenario;
