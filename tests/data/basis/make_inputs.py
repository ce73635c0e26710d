#!/usr/bin/env python3
"""Make the small encoder inputs for the Basis Universal / DDS fixtures.

Run from the repository root:  python3 tests/data/basis/make_inputs.py
Needs Pillow and NumPy. Sources are assets/photos/*.png (see assets/photos/LICENSE.md, all CC0 /
public domain). Output goes to tests/data/basis/inputs/. Deterministic (no randomness).
"""
import os
import struct

import numpy as np
from PIL import Image

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
SRC = os.path.join(ROOT, "assets", "photos")
OUT = os.path.join(ROOT, "tests", "data", "basis", "inputs")


def crop_resize(img, w, h):
    """Centre-crop img to the aspect ratio w:h, then Lanczos-resize to w x h."""
    sw, sh = img.size
    if sw * h > sh * w:  # too wide
        cw, ch = round(sh * w / h), sh
    else:
        cw, ch = sw, round(sw * h / w)
    x0, y0 = (sw - cw) // 2, (sh - ch) // 2
    return img.crop((x0, y0, x0 + cw, y0 + ch)).resize((w, h), Image.LANCZOS)


def srgb_to_linear(c):
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def write_radiance_hdr(path, rgb):
    """Write float32 HxWx3 linear RGB as an uncompressed (flat) Radiance RGBE .hdr file."""
    h, w, _ = rgb.shape
    rgb = np.maximum(rgb.astype(np.float64), 0.0)
    m = rgb.max(axis=2)
    out = np.zeros((h, w, 4), np.uint8)
    nz = m >= 1e-32
    mant, expo = np.frexp(m[nz])            # m = mant * 2**expo, mant in [0.5, 1)
    scale = mant * 256.0 / m[nz]
    out[nz, 0:3] = np.clip(rgb[nz] * scale[:, None], 0, 255).astype(np.uint8)
    out[nz, 3] = (expo + 128).astype(np.uint8)
    with open(path, "wb") as f:
        f.write(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n")
        f.write(("-Y %d +X %d\n" % (h, w)).encode())
        f.write(out.tobytes())


def main():
    os.makedirs(OUT, exist_ok=True)
    coffee = Image.open(os.path.join(SRC, "coffee.png")).convert("RGB")
    chelsea = Image.open(os.path.join(SRC, "chelsea.png")).convert("RGB")
    brick = Image.open(os.path.join(SRC, "brick.png")).convert("L")

    # 1. 128x128 colour (sRGB) crop of coffee.png
    c128 = crop_resize(coffee, 128, 128)
    c128.save(os.path.join(OUT, "coffee_128.png"), optimize=True)
    # 1b. the same crop as greyscale (Rec.601 luma, Pillow "L") in all four channels, RGBA: the input for
    #     BC4/ATI1, because nvcompress 2.0.8 -bc4 encodes the ALPHA channel (an opaque RGB input gives all 255).
    grey = c128.convert("L")
    Image.merge("RGBA", (grey, grey, grey, grey)).save(os.path.join(OUT, "coffee_grey_128.png"), optimize=True)

    # 2. 96x80 (non-power-of-two; 24x20 blocks, mips 48x40, 24x20, 12x10, 6x5, 3x2, 1x1) of chelsea.png
    crop_resize(chelsea, 96, 80).save(os.path.join(OUT, "chelsea_96x80.png"), optimize=True)

    # 3. 64x64 tangent-space normal map from brick.png luminance (height field), Sobel gradient.
    #    Convention: +X right, +Y up (OpenGL style), Z out of the surface.
    #    R = x*0.5+0.5, G = y*0.5+0.5, B = z*0.5+0.5 (z >= 0, so B is always >= 128).
    hgt = np.asarray(brick.resize((64, 64), Image.LANCZOS), np.float64) / 255.0
    p = np.pad(hgt, 1, mode="wrap")  # tileable
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy_down = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    strength = 2.0
    n = np.stack([-strength * gx, strength * gy_down, np.ones_like(gx)], axis=-1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    rgb = np.clip(np.round((n * 0.5 + 0.5) * 255.0), 0, 255).astype(np.uint8)
    Image.fromarray(rgb, "RGB").save(os.path.join(OUT, "brick_normal_64.png"), optimize=True)

    # 4. 64x64 HDR image: linearised coffee crop times a horizontal exposure ramp 2^-2 .. 2^4,
    #    then scaled so the brightest texel is 16.0; written as a flat (non-RLE) Radiance .hdr.
    lin = srgb_to_linear(np.asarray(crop_resize(coffee, 64, 64), np.float64) / 255.0)
    ramp = 2.0 ** np.linspace(-2.0, 4.0, 64)
    hdr = lin * ramp[None, :, None]
    hdr = (hdr * (16.0 / hdr.max())).astype(np.float32)  # brightest texel = 16.0
    write_radiance_hdr(os.path.join(OUT, "coffee_hdr_64.hdr"), hdr)
    print("HDR max value: %.3f" % float(hdr.max()))


if __name__ == "__main__":
    main()
