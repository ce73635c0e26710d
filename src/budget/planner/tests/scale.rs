//! The render scale against the mips: buckets, their prices, the render targets' bytes.

use super::*;

#[test]
fn fixed_and_render_targets_alone_too_big_unload_everything() {
    let textures = scene([tex(2, 0.0, 100.0)]);
    let buckets = [BucketCost {
        scale: 1.0,
        bytes: 500,
    }];
    let inp = PlanInput {
        buckets: &buckets,
        ..input(0, 400, &textures)
    };
    let mut plan = Plan::default();
    let status = Planner::default().plan(&inp, &mut plan);
    assert_eq!(
        status,
        PlanStatus::BudgetTooSmall {
            floor_bytes: 520,
            budget: 400
        }
    );
    assert_eq!(plan.target_level, [4]);
}

#[test]
fn render_scale_trades_with_mips() {
    // Output 1000 px, the texture covers all of it. At scale 0.5 the targets cost 100 bytes and
    // every pixel is 1 octave blurry; at 1.0 they cost 400.
    let buckets = [
        BucketCost {
            scale: 0.5,
            bytes: 100,
        },
        BucketCost {
            scale: 1.0,
            bytes: 400,
        },
    ];
    let textures = scene([tex(2, 0.0, 1000.0)]);
    let plan_from = |budget, weight, current_bucket| {
        let inp = PlanInput {
            buckets: &buckets,
            current_bucket,
            ..input(0, budget, &textures)
        };
        let mut plan = Plan::default();
        let _ = Planner::new(PlannerConfig {
            scale_blur_weight: weight,
            ..PlannerConfig::default()
        })
        .plan(&inp, &mut plan);
        plan
    };
    let plan_weighted = |budget, weight| plan_from(budget, weight, 0);
    // The currency unweighted: a scale octave and a texture octave count the same.
    let plan_at = |budget| plan_weighted(budget, 1.0);
    // Plenty: full scale and level 0 (400 + 340 + old floor 20 during the build).
    let plan = plan_at(760);
    assert_eq!((plan.bucket, plan.target_level[0]), (1, 0));
    assert_eq!(plan.quality_cost, 0.0);
    assert_eq!(
        plan.transitions,
        [
            tr(Transition::RENDER_TARGETS, 0, 1, TransitionKind::Rescale),
            tr(0, 2, 0, TransitionKind::Grow)
        ]
    );
    // 500: at scale 1 only level 1 fits (400 + 84 + 20 = 504 > 500, so level 2): 2000 px-oct;
    // at 0.5 the texture wants level 1 (mip bias 1) and gets it: 1000 px-octaves. Stay at 0.5.
    let plan = plan_at(500);
    assert_eq!((plan.bucket, plan.target_level[0]), (0, 1));
    assert_eq!(plan.quality_cost, 1000.0);
    // Weighed 4 to 1 (the default), the scale's octave costs 4000 against the texture's 2000:
    // the scale stays at 1 and the texture takes level 2 (the reported blur stays unweighted).
    let plan = plan_weighted(500, 4.0);
    assert_eq!((plan.bucket, plan.target_level[0]), (1, 2));
    assert_eq!(plan.quality_cost, 2000.0);
    assert_eq!(PlannerConfig::default().scale_blur_weight, 4.0);
    // From scale 1 at 600: level 1 fits there (1000 texture px-octaves), and scale 0.5 holds
    // all the texture wants there (level 1, with the bias; 1000 px-octaves of scale blur):
    // unweighted a tie, so the scale stays; weighed 1 to 4 the scale's blur costs 250 and the
    // scale gives way.
    assert_eq!(plan_from(600, 1.0, 1).bucket, 1);
    let plan = plan_from(600, 0.25, 1);
    assert_eq!((plan.bucket, plan.target_level[0]), (0, 1));
}

#[test]
fn a_bucket_dearer_than_a_higher_one_is_never_planned() {
    // An upscaler's intermediate is made only below native scale, so 0.875 (450 bytes) costs
    // more than 1.0 (400): it is blurrier and dearer, never worth planning, and the scale walk
    // must look past it. Output 1000 px, all of it the texture, which wants level 0 at 1.0.
    let buckets = [
        BucketCost {
            scale: 0.5,
            bytes: 100,
        },
        BucketCost {
            scale: 0.75,
            bytes: 200,
        },
        BucketCost {
            scale: 0.875,
            bytes: 450,
        },
        BucketCost {
            scale: 1.0,
            bytes: 400,
        },
    ];
    let mut textures = scene([tex(2, 0.0, 1000.0)]);
    let before = textures.clone();
    let inp = PlanInput {
        buckets: &buckets,
        current_bucket: 3,
        ..input(0, 480, &before)
    };
    let mut plan = Plan::default();
    let unweighted = PlannerConfig {
        scale_blur_weight: 1.0,
        ..PlannerConfig::default()
    };
    let _ = Planner::new(unweighted.clone()).plan(&inp, &mut plan);
    // At 1.0 only the floor fits (400 + 84 + 20 > 480): 2000 pixel-octaves; at 0.875 no better
    // (450 + 20, floor only: 193 + 1807); at 0.75 level 1 fits (200 + 84 + 20), which the
    // texture wants at 0.415 there: 415 + 585 = 1000. A walk that stopped at 0.875 stayed at 1.0.
    assert_eq!((plan.bucket, plan.target_level[0]), (1, 1));
    assert!(
        (plan.quality_cost - 1000.0).abs() < 1.0,
        "{}",
        plan.quality_cost
    );
    let mut exec = SimExecutor::new(&inp);
    exec.apply(&plan, inp.buckets, &mut textures).unwrap();
    exec.build(0, &mut textures).unwrap();
    assert!(exec.peak() <= 480);

    // When even the floors do not fit, the cheapest bucket is taken, here native scale.
    let buckets = [
        BucketCost {
            scale: 0.5,
            bytes: 300,
        },
        BucketCost {
            scale: 1.0,
            bytes: 100,
        },
    ];
    let textures = scene([tex(2, 0.0, 1000.0), tex(2, 0.0, 10.0)]);
    let inp = PlanInput {
        buckets: &buckets,
        current_bucket: 1,
        ..input(0, 125, &textures)
    };
    let mut plan = Plan::default();
    assert!(matches!(
        Planner::default().plan(&inp, &mut plan),
        PlanStatus::BudgetTooSmall { .. }
    ));
    // 100 + one floor (20) fits; 300 would leave none.
    assert_eq!(plan.bucket, 1);
    assert_eq!(plan.target_level[..], [2, 4]);
}
