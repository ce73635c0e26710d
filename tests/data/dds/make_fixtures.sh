#!/usr/bin/env bash
# Re-make the DDS fixtures. Run from the repository root, after
#   python3 tests/data/basis/make_inputs.py
#   BASISU=... tests/data/basis/make_fixtures.sh        (fills $SCRATCH with `basisu -unpack` output)
# Needs nvcompress from NVIDIA Texture Tools 2.0.8 (Debian: apt-get install libnvtt-bin).
set -euo pipefail
D=tests/data/dds
I=tests/data/basis/inputs
SCRATCH=${SCRATCH:-/tmp/fixtures-work/unpack}

# Legacy-FourCC files written by nvcompress (nvcompress makes the full mip chain by default).
nvcompress -bc1 $I/coffee_128.png $D/bc1.dds > /dev/null
nvcompress -bc3 $I/coffee_128.png $D/dxt5_legacy.dds > /dev/null
nvcompress -bc4 $I/coffee_grey_128.png $D/bc4.dds > /dev/null        # encodes the ALPHA channel (= luma here)
nvcompress -normal -bc5 $I/brick_normal_64.png $D/bc5.dds > /dev/null

# DX10-header files: blocks transcoded by basisu 1.16.3 (`basisu -unpack` writes KTX1 files of them),
# wrapped into DDS by make_bc7_dds.py.
P=python3
$P $D/make_bc7_dds.py $SCRATCH/uastc_coffee/uastc_coffee_transcoded_BC7_RGBA_0000.ktx $D/bc7.dds 99
$P $D/make_bc7_dds.py $SCRATCH/uastc_chelsea_96x80/uastc_chelsea_96x80_transcoded_BC7_RGBA_0000.ktx $D/bc7_chelsea_96x80.dds 99
$P $D/make_bc7_dds.py $SCRATCH/uastc_coffee/uastc_coffee_transcoded_BC1_RGB_0000.ktx $D/bc1_dx10_srgb.dds 72
$P $D/make_bc7_dds.py $SCRATCH/uastc_normal/uastc_normal_transcoded_BC5_RG_0000.ktx $D/bc5_dx10.dds 83

$P $D/check.py $D/*.dds
