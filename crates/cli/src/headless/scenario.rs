//! The scenario format (TOML): frames, output size, scene, camera keyframes, budget schedule and
//! assertions. See the README for every key.

use std::path::{Path, PathBuf};

use glam::Vec3;
use serde::Deserialize;

use crate::error::{Error, Result};
/// The schedule vocabulary (`[[budget]]`, `[[expect]]`, `[[act]]`) is the library's budget
/// test's ([`mipflow::harness`]): one definition for a game's tests and for scenarios.
pub use mipflow::harness::{Act, BudgetKey, Expect, SizeValue};

/// What to render.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
    /// `"demo"`: the built-in demo scene (procedural textures, cooked in memory); `"gallery"`:
    /// a folder of `.ktx2` files on a grid; `"grid"`: `count` small procedural textures.
    #[serde(default = "default_kind")]
    pub kind: String,
    /// Seed of the procedural content.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// For `gallery`: the folder of `.ktx2` files, relative to the scenario file.
    pub textures: Option<PathBuf>,
    /// For `demo` and `grid`: how many textures (demo default 64, grid default 2000).
    pub count: Option<u32>,
    /// For `demo` and `grid`: the largest texture side (demo default 1024, grid default 64).
    pub texture_size: Option<u32>,
    /// For `demo`: the hall's floor as one virtual texture of this side (a power of two, 256 to
    /// 8192), streamed tile by tile (tiles of 128, in the renderer's tile cache) instead of the
    /// first texture on every floor quad.
    pub floor_tiles: Option<u32>,
    /// For `demo`: a long wall behind each row of the hall's panels and a ceiling, one texture
    /// of this side each (a power of two, 256 to 8192), streamed tile by tile as
    /// `floor_tiles`'s.
    pub walls_tiles: Option<u32>,
}

fn default_kind() -> String {
    "demo".into()
}

fn default_seed() -> u64 {
    1
}

impl Default for SceneSpec {
    fn default() -> Self {
        Self {
            kind: default_kind(),
            seed: 1,
            textures: None,
            count: None,
            texture_size: None,
            floor_tiles: None,
            walls_tiles: None,
        }
    }
}

/// A camera keyframe; positions are interpolated linearly between keyframes, and a keyframe with
/// `cut = true` is jumped to instead (a camera cut).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CameraKey {
    /// Frame of the keyframe.
    pub frame: u64,
    /// Eye position.
    pub position: [f32; 3],
    /// Point looked at.
    pub look_at: [f32; 3],
    /// Jump to this key at its frame instead of moving towards it.
    #[serde(default)]
    pub cut: bool,
}

/// A whole scenario.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Frames to render (default 600).
    #[serde(default = "default_frames")]
    pub frames: u64,
    /// Output size (default 1280x720).
    #[serde(default = "default_size")]
    pub size: [u32; 2],
    /// The scene.
    #[serde(default)]
    pub scene: SceneSpec,
    /// Camera keyframes (default: a slow dolly through the scene).
    #[serde(default)]
    pub camera: Vec<CameraKey>,
    /// Budget schedule (default: 256 MiB throughout).
    #[serde(default)]
    pub budget: Vec<BudgetKey>,
    /// Assertions.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// Smallest render scale (default 0.5).
    pub min_scale: Option<f32>,
    /// Anisotropic filtering, 1 to 16 (default 8; 1 makes lavapipe runs several times faster).
    pub anisotropy: Option<u16>,
    /// With no camera keyframes, the demo's tour flies one lap in this many frames (default:
    /// the run's `frames`).
    pub tour_frames: Option<u64>,
    /// Acts of a story (the demo's `--tour`): each from its frame on, with a title; the demo
    /// shows the title and what the budget moved since the act began, the headless report
    /// writes the same caption per act.
    #[serde(default)]
    pub act: Vec<Act>,
    /// Where relative paths are resolved (the scenario file's folder).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Most frames a run may have (a report keeps every frame: 1M frames is ~300 MB of JSON).
pub const MAX_FRAMES: u64 = 1_000_000;
/// Most textures a scene may have.
pub const MAX_COUNT: u32 = 100_000;

fn default_frames() -> u64 {
    600
}

fn default_size() -> [u32; 2] {
    [1280, 720]
}

impl Default for Scenario {
    fn default() -> Self {
        toml::from_str("").unwrap_or_else(|_| unreachable!("an empty scenario parses"))
    }
}

impl Scenario {
    /// Parses a scenario from TOML text; `base_dir` resolves relative paths.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Self> {
        let mut s: Scenario = toml::from_str(text).map_err(|e| Error::Scenario(e.to_string()))?;
        s.base_dir = base_dir.to_path_buf();
        s.validate()?;
        Ok(s)
    }

    /// Reads a scenario file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path.parent().unwrap_or(Path::new("."))).map_err(|e| {
            // `Error::Scenario` prints "scenario: " itself: not twice.
            let what = match e {
                Error::Scenario(m) => m,
                other => other.to_string(),
            };
            Error::Scenario(format!("{}: {what}", path.display()))
        })
    }

    /// Checks values a run cannot work with, or that would be silently coerced: every figure
    /// in range, finite, keyframes in order. Why the upper limits: a run's report keeps every
    /// frame, and a scene is built before the first frame; a value past them is a typo, and
    /// refusing it beats an allocation the machine cannot make.
    pub fn validate(&self) -> Result<()> {
        self.validate_with(true)
    }

    /// [`Scenario::validate`]; `expects_in_run`: refuse an `[[expect]]` past the last frame
    /// (a run shortened by `--frames` reports such an expectation as failed instead, as it
    /// always has: scripts shorten scenarios that way).
    fn validate_with(&self, expects_in_run: bool) -> Result<()> {
        let bad = |m: String| Err(Error::Scenario(m));
        if self.frames == 0 || self.frames > MAX_FRAMES {
            return bad(format!(
                "frames = {} must be within 1..={MAX_FRAMES}",
                self.frames
            ));
        }
        if let Some(c) = self.scene.count
            && !(1..=MAX_COUNT).contains(&c)
        {
            return bad(format!("scene count = {c} must be within 1..={MAX_COUNT}"));
        }
        for (key, v) in [
            ("floor_tiles", self.scene.floor_tiles),
            ("walls_tiles", self.scene.walls_tiles),
        ] {
            if let Some(f) = v
                && !(f.is_power_of_two() && (256..=8192).contains(&f))
            {
                return bad(format!("{key} = {f}: a power of two from 256 to 8192"));
            }
        }
        if let Some(t) = self.scene.texture_size
            && !(16..=8192).contains(&t)
        {
            return bad(format!("texture_size = {t} must be within 16..=8192"));
        }
        if let Some(t) = self.scene.texture_size
            && let Err(e) = check_texture_size(&self.scene.kind, t)
        {
            return bad(format!("texture_size = {e}"));
        }
        if let Some(a) = self.anisotropy
            && !(1..=16).contains(&a)
        {
            return bad(format!("anisotropy = {a} must be within 1..=16"));
        }
        if let Some(t) = self.tour_frames
            && !(1..=MAX_FRAMES).contains(&t)
        {
            return bad(format!("tour_frames = {t} must be within 1..={MAX_FRAMES}"));
        }
        for w in self.act.windows(2) {
            if w[1].frame <= w[0].frame {
                return bad(format!(
                    "act frames must increase: {} after {}",
                    w[1].frame, w[0].frame
                ));
            }
        }
        if let Some(a) = self.act.iter().find(|a| a.title.len() > 200) {
            return bad(format!(
                "act at frame {}: title is {} bytes, at most 200 allowed",
                a.frame,
                a.title.len()
            ));
        }
        if let Some(m) = self.min_scale
            && !(m.is_finite() && m > 0.0 && m <= 1.0)
        {
            return bad(format!("min_scale = {m} must be in (0, 1]"));
        }
        let mut last = None;
        for k in &self.camera {
            if !k.position.iter().chain(&k.look_at).all(|v| v.is_finite()) {
                return bad(format!(
                    "camera key at frame {}: position and look_at must be finite numbers",
                    k.frame
                ));
            }
            if last.is_some_and(|f| k.frame <= f) {
                return bad(format!(
                    "camera keys must be in frame order, one key a frame ({} after {}; \
                     `cut = true` on a key jumps to it)",
                    k.frame,
                    last.unwrap_or(0)
                ));
            }
            last = Some(k.frame);
        }
        for e in &self.expect {
            for (name, v) in [
                ("min_render_scale", e.min_render_scale),
                ("max_render_scale", e.max_render_scale),
            ] {
                if let Some(v) = v
                    && !v.is_finite()
                {
                    return bad(format!(
                        "expect at frame {}: {name} = {v} must be a finite number",
                        e.frame
                    ));
                }
            }
            if let (Some(lo), Some(hi)) = (e.min_render_scale, e.max_render_scale)
                && lo > hi
            {
                return bad(format!(
                    "expect at frame {}: min_render_scale = {lo} > max_render_scale = {hi}: no \
                     scale meets both",
                    e.frame
                ));
            }
        }
        if self.size[0] == 0 || self.size[1] == 0 || self.size[0] > 16384 || self.size[1] > 16384 {
            return bad(format!(
                "size = [{}, {}]: each side must be within 1..=16384",
                self.size[0], self.size[1]
            ));
        }
        for (i, b) in self.budget.iter().enumerate() {
            if let Err(e) = b.bytes.bytes() {
                return bad(format!("budget at frame {}: {e}", b.frame));
            }
            if self.budget[..i].iter().any(|o| o.frame == b.frame) {
                return bad(format!(
                    "two budgets at frame {}: one key a frame (the last one would win silently)",
                    b.frame
                ));
            }
        }
        // A budget or an act past the last frame would never apply: refused as an expectation
        // there is (unless `--frames` shortened the run, as scripts do).
        let past = |what: &str, frame: u64| {
            bad(format!(
                "{what} at frame {frame}: the scenario has {} frames (0..={}): it would never \
                 apply",
                self.frames,
                self.frames.saturating_sub(1)
            ))
        };
        if expects_in_run {
            if let Some(b) = self.budget.iter().find(|b| b.frame >= self.frames) {
                return past("budget", b.frame);
            }
            if let Some(a) = self.act.iter().find(|a| a.frame >= self.frames) {
                return past("act", a.frame);
            }
        }
        if let Some(e) = self
            .expect
            .iter()
            .find(|e| e.frame >= self.frames && expects_in_run)
        {
            return bad(format!(
                "expect at frame {}: the scenario has {} frames (0..={}): it would never be \
                 checked",
                e.frame,
                self.frames,
                self.frames.saturating_sub(1)
            ));
        }
        for e in &self.expect {
            if let Some(Err(err)) = e.max_total_bytes.as_ref().map(SizeValue::bytes) {
                return bad(format!(
                    "expect at frame {}: max_total_bytes: {err}",
                    e.frame
                ));
            }
        }
        // A key of another kind of scene is a mistake that would go unnoticed: the run would
        // pass on a scene it was not meant to show (`textures` without `kind = "gallery"`
        // showed the procedural hall).
        let misplaced = match self.scene.kind.as_str() {
            "demo" | "grid" if self.scene.textures.is_some() => Some("textures"),
            "gallery" if self.scene.count.is_some() => Some("count"),
            "gallery" if self.scene.texture_size.is_some() => Some("texture_size"),
            "gallery" | "grid" if self.scene.floor_tiles.is_some() => Some("floor_tiles"),
            "gallery" | "grid" if self.scene.walls_tiles.is_some() => Some("walls_tiles"),
            _ => None,
        };
        if let Some(key) = misplaced {
            let needs = if key == "textures" {
                "kind = \"gallery\""
            } else if key == "floor_tiles" || key == "walls_tiles" {
                "kind = \"demo\""
            } else {
                "kind = \"demo\" or \"grid\""
            };
            return bad(format!(
                "[scene] {key} applies only with {needs} (kind is {:?})",
                self.scene.kind
            ));
        }
        match self.scene.kind.as_str() {
            "demo" | "grid" => {}
            "gallery" if self.scene.textures.is_some() => {}
            "gallery" => return bad("scene kind \"gallery\" needs `textures = \"dir\"`".into()),
            k => {
                return bad(format!(
                    "unknown scene kind {k:?}: expected \"demo\", \"gallery\" or \"grid\""
                ));
            }
        }
        Ok(())
    }

    /// [`Scenario::validate`] after `--frames` / `--size` overrides.
    pub fn with_overrides(mut self, frames: Option<u64>, size: Option<(u32, u32)>) -> Result<Self> {
        if let Some(f) = frames {
            self.frames = f;
        }
        if let Some((w, h)) = size {
            self.size = [w, h];
        }
        self.validate_with(frames.is_none())?;
        Ok(self)
    }

    /// The act in force at `frame` and its index, if any.
    pub fn act_at(&self, frame: u64) -> Option<(usize, &Act)> {
        Act::at(&self.act, frame)
    }

    /// The budget in force at `frame` (256 MiB before the first key).
    pub fn budget_at(&self, frame: u64) -> u64 {
        BudgetKey::at(&self.budget, frame)
    }

    /// The highest budget of the schedule.
    pub fn budget_max(&self) -> u64 {
        BudgetKey::max(&self.budget)
    }

    /// Eye and target at `frame`: linear between keyframes, holding before the first and after
    /// the last; a `cut` key is jumped to at its frame. `None` without keyframes (the runner then
    /// uses the scene's own tour).
    pub fn camera_at(&self, frame: u64) -> Option<(Vec3, Vec3)> {
        let keys = &self.camera;
        let v = |a: [f32; 3]| Vec3::from(a);
        let mut prev = keys.first()?;
        if frame <= prev.frame {
            return Some((v(prev.position), v(prev.look_at)));
        }
        for k in &keys[1..] {
            if frame < k.frame {
                if k.cut {
                    return Some((v(prev.position), v(prev.look_at)));
                }
                let t = (frame - prev.frame) as f32 / (k.frame - prev.frame).max(1) as f32;
                return Some((
                    v(prev.position).lerp(v(k.position), t),
                    v(prev.look_at).lerp(v(k.look_at), t),
                ));
            }
            prev = k;
        }
        Some((v(prev.position), v(prev.look_at)))
    }
}

/// Whether procedural textures of `size` (a `kind` scene's largest side; the demo's also
/// come at a half and a quarter of it) can go on the GPU: some mip level of each has sides
/// that are multiples of the 4x4 BC7 block. The message starts with the size.
pub fn check_texture_size(kind: &str, size: u32) -> std::result::Result<(), String> {
    use mipflow_cook::procedural::{block_alignable, demo_sides};
    let sides = match kind {
        "demo" => demo_sides(size).to_vec(),
        _ => vec![size],
    };
    match sides.into_iter().find(|&s| !block_alignable(s)) {
        Some(s) => Err(format!(
            "{size}: no mip level of a {s}x{s} texture has sides that are multiples of 4 (the \
             BC7 block), so it cannot go on the GPU; a multiple of 16 always works"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
frames = 600
size = [1280, 720]
[scene]
kind = "demo"
seed = 1
[[camera]]
frame = 0
position = [0.0, 1.6, 0.0]
look_at = [0.0, 1.6, -10.0]
[[camera]]
frame = 100
position = [0.0, 1.6, -10.0]
look_at = [0.0, 1.6, -20.0]
[[camera]]
frame = 200
position = [50.0, 1.6, 0.0]
look_at = [0.0, 0.0, 0.0]
cut = true
[[budget]]
frame = 0
bytes = "256MiB"
[[budget]]
frame = 300
bytes = 50000000
[[expect]]
frame = 500
min_render_scale = 0.9
all_wanted_resident = true
"#;

    #[test]
    fn parses_the_documented_example() {
        let s = Scenario::parse(EXAMPLE, Path::new(".")).unwrap();
        assert_eq!(s.frames, 600);
        assert_eq!(s.size, [1280, 720]);
        assert_eq!(s.budget_at(0), 256 << 20);
        assert_eq!(s.budget_at(299), 256 << 20);
        assert_eq!(s.budget_at(300), 50_000_000);
        assert_eq!(s.budget_max(), 256 << 20);
        assert_eq!(s.expect[0].min_render_scale, Some(0.9));
        let (eye, _) = s.camera_at(50).unwrap();
        assert!((eye.z + 5.0).abs() < 1e-5, "halfway between keys: {eye}");
        let (eye, _) = s.camera_at(150).unwrap();
        assert!(
            (eye.z + 10.0).abs() < 1e-5,
            "before a cut the camera holds: {eye}"
        );
        let (eye, _) = s.camera_at(200).unwrap();
        assert_eq!(eye.x, 50.0, "at the cut it jumps");
    }

    #[test]
    fn refuses_bad_scenarios() {
        for bad in [
            "frames = 0",
            "size = [0, 10]",
            "[scene]\nkind = \"moon\"",
            "[scene]\nkind = \"gallery\"",
            "[[budget]]\nframe = 0\nbytes = \"12 parsecs\"",
            "unknown_key = 1",
            "frames = \"many\"",
            // Absurd or silently coerced values.
            "frames = 9223372036854775807",
            "frames = 1000000000",
            "[scene]\ncount = 4000000000",
            "[scene]\ntexture_size = 100000",
            "anisotropy = 0",
            "anisotropy = 65535",
            "min_scale = 0.0",
            "min_scale = 2.0",
            "min_scale = nan",
            "[[camera]]\nframe = 0\nposition = [nan, 0.0, 0.0]\nlook_at = [0.0, 0.0, -1.0]",
            "[[camera]]\nframe = 10\nposition = [0.0, 0.0, 0.0]\nlook_at = [0.0, 0.0, -1.0]\n[[camera]]\nframe = 5\nposition = [1.0, 0.0, 0.0]\nlook_at = [0.0, 0.0, -1.0]",
            "[[expect]]\nframe = 1\nmin_render_scale = nan",
            // No level of the chain is a multiple of the BC7 block (1002, 501, 250, 125, ...).
            "[scene]\nkind = \"grid\"\ntexture_size = 1002",
            "[scene]\ntexture_size = 1002",
            // The demo's quarter-size textures of 1004 are 251 (251, 125, 62, 31, ...).
            "[scene]\ntexture_size = 1004",
            // A key of another kind of scene: the run would show what it was not meant to.
            "[scene]\ntextures = \"ci/textures\"",
            "[scene]\nkind = \"grid\"\ntextures = \"ci/textures\"",
            "[scene]\nkind = \"gallery\"\ntextures = \"x\"\ncount = 5",
            "[scene]\nkind = \"gallery\"\ntextures = \"x\"\ntexture_size = 64",
            // Two keys at one frame: the camera cut without `cut`, the last budget won.
            "[[camera]]\nframe = 10\nposition = [0.0, 0.0, 0.0]\nlook_at = [0.0, 0.0, -1.0]\n[[camera]]\nframe = 10\nposition = [1.0, 0.0, 0.0]\nlook_at = [0.0, 0.0, -1.0]",
            "[[budget]]\nframe = 0\nbytes = \"64MiB\"\n[[budget]]\nframe = 0\nbytes = \"32MiB\"",
            // An expectation the run never reaches; a budget or an act that never applies.
            "frames = 10\n[[expect]]\nframe = 10\nmax_violations = 0",
            "frames = 10\n[[budget]]\nframe = 10\nbytes = \"8MiB\"",
            "frames = 10\n[[act]]\nframe = 12\ntitle = \"too late\"",
            // No scale meets both bounds: refused up front (exit 2), not failed at the end.
            "[[expect]]\nframe = 1\nmin_render_scale = 0.9\nmax_render_scale = 0.5",
        ] {
            assert!(
                Scenario::parse(bad, Path::new(".")).is_err(),
                "{bad:?} must be refused"
            );
        }
        assert_eq!(Scenario::default().frames, 600);
        // Sides with a block-aligned level somewhere in the chain are kept (17 goes on the GPU
        // from its 8x8 level 1; a demo of 100 has sides 100, 64 and 64).
        for good in [
            "[scene]\nkind = \"grid\"\ntexture_size = 17",
            "[scene]\nkind = \"grid\"\ntexture_size = 1004",
            "[scene]\ntexture_size = 100",
            "[scene]\ntexture_size = 1024",
        ] {
            assert!(Scenario::parse(good, Path::new(".")).is_ok(), "{good:?}");
        }
        // A run shortened by --frames keeps its expectations past the end: they fail the run
        // at the end, as they always have.
        let shortened = Scenario::parse(
            "frames = 100\n[[expect]]\nframe = 90\nmax_violations = 0",
            Path::new("."),
        )
        .unwrap();
        assert!(shortened.with_overrides(Some(5), None).is_ok());
        // Overrides are checked the same way.
        assert!(Scenario::default().with_overrides(Some(0), None).is_err());
        assert!(
            Scenario::default()
                .with_overrides(Some(u64::MAX), None)
                .is_err()
        );
        assert!(
            Scenario::default()
                .with_overrides(Some(10), Some((0, 1)))
                .is_err()
        );
        assert_eq!(
            Scenario::default()
                .with_overrides(Some(10), Some((64, 32)))
                .unwrap()
                .frames,
            10
        );
    }
}
