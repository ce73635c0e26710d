//! What a streamed level costs the IO workers beyond its read: a Basis level transcoded to the
//! GPU's format (UASTC and ETC1S to BC7, whole 128x128 chains of the reference encoder's files),
//! against a plain BCn level copied out of the same kind of file. Throughput is in texels of
//! the chain (criterion's "elements").
//!
//! `cargo bench --bench transcode`

use std::io::Cursor;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mipflow::ktx2::{Ktx2Info, read_level};

fn file(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("level read");
    for name in [
        "basis/uastc_coffee.ktx2",
        "basis/uastc_zstd_coffee.ktx2",
        "basis/etc1s_coffee.ktx2",
        "dds/bc7.dds",
    ] {
        let bytes = file(name);
        let info = Ktx2Info::parse(&bytes, bytes.len() as u64, &Default::default()).unwrap();
        let texels: u64 = (0..info.levels.len())
            .map(|l| {
                let (w, h) = info.level_dims(l);
                u64::from(w) * u64::from(h)
            })
            .sum();
        group.throughput(Throughput::Elements(texels));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut cur = Cursor::new(&bytes[..]);
                for level in 0..info.levels.len() {
                    std::hint::black_box(read_level(&mut cur, &info, level).unwrap());
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
