//! The demo's argument checks and surface format choice.

use super::*;

#[test]
fn wxh_parses_and_rejects() {
    use crate::parse_wxh;
    assert_eq!(parse_wxh("1280x720"), Some((1280, 720)));
    assert_eq!(parse_wxh(" 640X480 "), Some((640, 480)));
    for bad in ["", "x", "0x10", "10x", "20000x10", "-1x5", "axb"] {
        assert_eq!(parse_wxh(bad), None, "{bad}");
    }
}

#[test]
fn options_check_the_arguments() {
    assert!(Options::from_args(&DemoArgs::default()).is_ok());
    // Sizes and budgets are refused by their clap value parsers.
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        demo: DemoArgs,
    }
    assert!(Cli::try_parse_from(["demo", "--budget", "lots"]).is_err());
    assert!(Cli::try_parse_from(["demo", "--size", "0x10"]).is_err());
    let ok = Cli::try_parse_from(["demo", "--budget", "64MiB", "--size", "640x360"]).unwrap();
    assert_eq!((ok.demo.budget, ok.demo.size), (Some(64 << 20), (640, 360)));
    assert_eq!(
        Cli::try_parse_from(["demo"]).unwrap().demo.budget,
        None,
        "automatic by default"
    );
    let bad = [
        DemoArgs {
            count: 0,
            ..DemoArgs::default()
        },
        DemoArgs {
            max_size: 10,
            ..DemoArgs::default()
        },
        DemoArgs {
            min_scale: f32::NAN,
            ..DemoArgs::default()
        },
        DemoArgs {
            anisotropy: Some(0),
            ..DemoArgs::default()
        },
        DemoArgs {
            tour_frames: 0,
            ..DemoArgs::default()
        },
        // No demo side of 1002 (1002, 501, 250) goes on the GPU: every texture failed to
        // register and the run still exited 0 with an empty hall.
        DemoArgs {
            max_size: 1002,
            ..DemoArgs::default()
        },
        // It was quietly taken as 1.
        DemoArgs {
            frames: Some(0),
            ..DemoArgs::default()
        },
    ];
    for b in bad {
        assert!(Options::from_args(&b).is_err(), "{b:?}");
    }
    let o = Options::from_args(&DemoArgs {
        screenshot: Some("x.png".into()),
        ..DemoArgs::default()
    })
    .unwrap();
    assert_eq!(o.frames, Some(120));
    assert_eq!(o.budget, None);
}

#[test]
fn format_prefers_8_bit_srgb() {
    use wgpu::TextureFormat as F;
    assert_eq!(
        pick_format(&[F::Rgb10a2Unorm, F::Bgra8UnormSrgb]),
        Some(F::Bgra8UnormSrgb)
    );
    assert_eq!(pick_format(&[F::Bgra8Unorm]), Some(F::Bgra8Unorm));
    assert_eq!(pick_format(&[]), None);
}

/// The loop's pace: frames as fast as they go while drawn; asleep while minimised; while the
/// surface says the window is occluded, asleep until the retry time (Metal answers `Occluded`
/// at once: polling spun a core at 100% on a hidden window), then frames again.
#[test]
fn an_occluded_window_waits_instead_of_spinning() {
    use winit::event_loop::ControlFlow;
    let now = Instant::now();
    let later = now + OCCLUDED_RETRY;
    assert_eq!(pace(false, None, now), ControlFlow::Poll);
    assert_eq!(pace(true, None, now), ControlFlow::Wait);
    assert_eq!(pace(true, Some(later), now), ControlFlow::Wait);
    assert_eq!(pace(false, Some(later), now), ControlFlow::WaitUntil(later));
    assert_eq!(pace(false, Some(now), later), ControlFlow::Poll);
}
