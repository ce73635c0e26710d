//! sRGB transfer functions (IEC 61966-2-1), exact formulas plus an 8-bit decode table.

use std::sync::OnceLock;

/// sRGB-encoded value in 0..=1 to linear light.
pub fn srgb_to_linear(v: f32) -> f32 {
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light in 0..=1 to the sRGB-encoded value.
pub fn linear_to_srgb(v: f32) -> f32 {
    if v <= 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// Table of [`srgb_to_linear`] for every 8-bit code.
pub fn srgb8_table() -> &'static [f32; 256] {
    static TABLE: OnceLock<[f32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0)))
}

/// Linear light to the nearest 8-bit sRGB code (clamped to 0..=1 first; NaN gives 0).
pub fn linear_to_srgb8(v: f32) -> u8 {
    let v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    (linear_to_srgb(v) * 255.0 + 0.5) as u8
}

/// A 0..=1 value to the nearest 8-bit code (clamped; NaN gives 0).
pub fn unorm8(v: f32) -> u8 {
    let v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    (v * 255.0 + 0.5) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_code() {
        for i in 0..=255u8 {
            assert_eq!(linear_to_srgb8(srgb8_table()[i as usize]), i);
        }
    }

    #[test]
    fn half_linear_is_188() {
        assert_eq!(linear_to_srgb8(0.5), 188);
    }
}
