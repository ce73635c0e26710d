//! Where the budget figure comes from: plain bytes, a fraction of the adapter's memory, or the
//! caller's callback. The ledger is the truth for usage; this is only the limit.

use std::fmt;
use std::sync::Arc;

use crate::{Error, Result};

/// What the adapter says about its memory, where it can be known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AdapterMemory {
    /// Bytes of the largest device-local heap.
    pub device_local_bytes: u64,
    /// The driver's current budget for that heap (VK_EXT_memory_budget), when it reports one.
    pub driver_budget_bytes: Option<u64>,
    /// Where the figures came from ("VK_EXT_memory_budget", "device-local heap size", ...).
    pub source: &'static str,
}

/// The source of a [`Budget`]'s figure.
#[derive(Clone)]
#[non_exhaustive]
pub enum BudgetSource {
    /// A fixed number of bytes (from the command line, a config or a slider).
    Bytes(u64),
    /// A fraction of the adapter's device-local memory (or of the driver's budget where it reports
    /// one, which already accounts for other processes).
    AdapterFraction {
        /// The fraction, in (0, 1].
        fraction: f64,
        /// What the adapter reported when the budget was made.
        memory: AdapterMemory,
    },
    /// The caller decides, every time the figure is read (e.g. a game that shares VRAM with its
    /// own systems). Must be cheap: it is called once per frame.
    Callback(Arc<dyn Fn() -> u64 + Send + Sync>),
}

impl fmt::Debug for BudgetSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl BudgetSource {
    /// A short human description, for the overlay and the report.
    pub fn describe(&self) -> String {
        match self {
            BudgetSource::Bytes(b) => format!("fixed {}", format_bytes(*b)),
            BudgetSource::AdapterFraction { fraction, memory } => {
                match memory.driver_budget_bytes {
                    Some(d) => format!(
                        "{:.0}% of the driver's memory budget ({}, {})",
                        fraction * 100.0,
                        format_bytes(d),
                        memory.source
                    ),
                    None => format!(
                        "{:.0}% of the adapter's device-local heap ({})",
                        fraction * 100.0,
                        format_bytes(memory.device_local_bytes)
                    ),
                }
            }
            BudgetSource::Callback(_) => "the application's callback".to_owned(),
        }
    }
}

/// The VRAM budget: a source, read once per frame. It can be replaced at any time.
#[derive(Clone, Debug)]
pub struct Budget {
    source: BudgetSource,
}

impl Budget {
    /// A fixed budget of `bytes`.
    pub fn bytes(bytes: u64) -> Self {
        Self {
            source: BudgetSource::Bytes(bytes),
        }
    }

    /// A budget parsed from text such as `"256MiB"`, `"1.5GiB"` or `"1000000"`.
    pub fn parse(text: &str) -> Result<Self> {
        Ok(Self::bytes(parse_size(text)?))
    }

    /// `fraction` of the adapter's memory (of the driver's budget where it reports one).
    pub fn adapter_fraction(fraction: f64, memory: AdapterMemory) -> Result<Self> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(Error::InvalidSize {
                input: fraction.to_string(),
                reason: "a budget fraction must be in (0, 1]".into(),
            });
        }
        Ok(Self {
            source: BudgetSource::AdapterFraction { fraction, memory },
        })
    }

    /// A budget the caller's `f` decides on every read.
    pub fn callback(f: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        Self {
            source: BudgetSource::Callback(Arc::new(f)),
        }
    }

    /// The budget in bytes, now.
    pub fn current_bytes(&self) -> u64 {
        match &self.source {
            BudgetSource::Bytes(b) => *b,
            BudgetSource::AdapterFraction { fraction, memory } => {
                let base = memory
                    .driver_budget_bytes
                    .unwrap_or(memory.device_local_bytes);
                (base as f64 * fraction) as u64
            }
            BudgetSource::Callback(f) => f(),
        }
    }

    /// Where the figure comes from.
    pub fn source(&self) -> &BudgetSource {
        &self.source
    }
}

/// Parses a byte size: a plain integer (`"1000000"`), or a number with a unit: `B`, `KB`/`MB`/`GB`
/// (powers of 1000), `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024), `K`/`M`/`G` (taken as binary, as
/// most tools do). Fractions are allowed with a unit (`"1.5GiB"`). Case-insensitive; spaces between
/// number and unit are allowed.
pub fn parse_size(text: &str) -> Result<u64> {
    let err = |reason: &str| Error::InvalidSize {
        input: text.to_owned(),
        reason: reason.to_owned(),
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(err("expected a number, such as 256MiB"));
    }
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000 * 1000,
        "gb" => 1000 * 1000 * 1000,
        "tb" => 1000 * 1000 * 1000 * 1000,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        _ => return Err(err("unknown unit (use B, KiB, MiB, GiB, KB, MB, GB)")),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult).ok_or_else(|| err("too large"));
    }
    let f: f64 = num.parse().map_err(|_| err("not a number"))?;
    let v = f * mult as f64;
    if !v.is_finite() || v >= u64::MAX as f64 {
        return Err(err("too large"));
    }
    Ok(v.round() as u64)
}

/// Formats bytes for people: `"1.50 GiB"`, `"256.0 MiB"`, `"512 B"`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1} {}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1.5GiB").unwrap(), 1536 << 20);
        assert_eq!(parse_size("1000000").unwrap(), 1_000_000);
        assert_eq!(parse_size("48 mib").unwrap(), 48 << 20);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        for bad in [
            "",
            "MiB",
            "12 parsecs",
            "1.2.3GiB",
            "99999999999999999999999TiB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn sources() {
        assert_eq!(Budget::parse("1KiB").unwrap().current_bytes(), 1024);
        let mem = AdapterMemory {
            device_local_bytes: 1000,
            driver_budget_bytes: None,
            source: "device-local heap size",
        };
        let b = Budget::adapter_fraction(0.5, mem).unwrap();
        assert_eq!(b.current_bytes(), 500);
        assert!(b.source().describe().contains("50%"));
        let mem2 = AdapterMemory {
            driver_budget_bytes: Some(600),
            source: "VK_EXT_memory_budget",
            ..mem
        };
        assert!(
            Budget::adapter_fraction(0.5, mem2)
                .unwrap()
                .source()
                .describe()
                .contains("VK_EXT_memory_budget")
        );
        assert_eq!(
            Budget::adapter_fraction(0.5, mem2).unwrap().current_bytes(),
            300
        );
        assert!(Budget::adapter_fraction(1.5, mem).is_err());
        let shared = Arc::new(std::sync::atomic::AtomicU64::new(7));
        let s2 = shared.clone();
        let b = Budget::callback(move || s2.load(std::sync::atomic::Ordering::Relaxed));
        assert_eq!(b.current_bytes(), 7);
        shared.store(9, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(b.current_bytes(), 9);
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(256 << 20), "256.0 MiB");
        assert_eq!(format_bytes(1536 << 20), "1.5 GiB");
    }
}
