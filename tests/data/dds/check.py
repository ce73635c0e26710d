#!/usr/bin/env python3
"""Parse DDS headers and check the file size against the mip chain (no dependencies).

Usage: python3 tests/data/dds/check.py FILE.dds [...]
Prints width, height, mip count, FourCC or DXGI format, the header flags that readers trip over,
and checks that file size == 4 (magic) + 124 (DDS_HEADER) [+ 20 (DDS_HEADER_DXT10)] + the sum of the
level sizes (block-compressed: ceil(w/4)*ceil(h/4)*block bytes per level; uncompressed: w*h*bpp/8).
Exits non-zero if any file fails.
"""
import struct
import sys

DDSD = {0x1: "CAPS", 0x2: "HEIGHT", 0x4: "WIDTH", 0x8: "PITCH", 0x1000: "PIXELFORMAT", 0x20000: "MIPMAPCOUNT",
        0x80000: "LINEARSIZE", 0x800000: "DEPTH"}
DDPF = {0x1: "ALPHAPIXELS", 0x2: "ALPHA", 0x4: "FOURCC", 0x40: "RGB", 0x200: "YUV", 0x20000: "LUMINANCE",
        0x80000: "BUMPDUDV", 0x80000000: "NORMAL (nvtt-specific)"}
CAPS = {0x8: "COMPLEX", 0x1000: "TEXTURE", 0x400000: "MIPMAP"}
FOURCC_BLOCK = {b"DXT1": 8, b"DXT2": 16, b"DXT3": 16, b"DXT4": 16, b"DXT5": 16, b"ATI1": 8, b"BC4U": 8, b"BC4S": 8,
                b"ATI2": 16, b"BC5U": 16, b"BC5S": 16}
# DXGI_FORMAT values of the block-compressed formats -> (name, bytes per 4x4 block)
DXGI = {70: ("BC1_TYPELESS", 8), 71: ("BC1_UNORM", 8), 72: ("BC1_UNORM_SRGB", 8),
        73: ("BC2_TYPELESS", 16), 74: ("BC2_UNORM", 16), 75: ("BC2_UNORM_SRGB", 16),
        76: ("BC3_TYPELESS", 16), 77: ("BC3_UNORM", 16), 78: ("BC3_UNORM_SRGB", 16),
        79: ("BC4_TYPELESS", 8), 80: ("BC4_UNORM", 8), 81: ("BC4_SNORM", 8),
        82: ("BC5_TYPELESS", 16), 83: ("BC5_UNORM", 16), 84: ("BC5_SNORM", 16),
        94: ("BC6H_TYPELESS", 16), 95: ("BC6H_UF16", 16), 96: ("BC6H_SF16", 16),
        97: ("BC7_TYPELESS", 16), 98: ("BC7_UNORM", 16), 99: ("BC7_UNORM_SRGB", 16)}
DXGI_UNCOMPRESSED_BPP = {28: ("R8G8B8A8_UNORM", 32), 29: ("R8G8B8A8_UNORM_SRGB", 32), 87: ("B8G8R8A8_UNORM", 32),
                         10: ("R16G16B16A16_FLOAT", 64), 2: ("R32G32B32A32_FLOAT", 128)}


def names(v, table):
    return "|".join(n for b, n in table.items() if v & b) or "0"


def check(path):
    d = open(path, "rb").read()
    if d[:4] != b"DDS ":
        print("%s: bad magic" % path)
        return False
    (size, flags, h, w, pitch, depth, mips) = struct.unpack_from("<7I", d, 4)
    pf_size, pf_flags, fourcc, bitcount, rm, gm, bm, am = struct.unpack_from("<II4s5I", d, 76)
    caps, caps2 = struct.unpack_from("<II", d, 108)
    hdr = 128
    array_size, faces = 1, 1
    block = None
    bpp = None
    if pf_flags & 0x4 and fourcc == b"DX10":
        dxgi, dim, misc, array_size, misc2 = struct.unpack_from("<5I", d, 128)
        hdr += 20
        if misc & 0x4:
            faces = 6
        if dxgi in DXGI:
            fmt_name, block = DXGI[dxgi]
        elif dxgi in DXGI_UNCOMPRESSED_BPP:
            fmt_name, bpp = DXGI_UNCOMPRESSED_BPP[dxgi]
        else:
            fmt_name = "?"
        fmt = "DX10 dxgiFormat=%d (%s) resourceDimension=%d miscFlag=0x%x arraySize=%d miscFlags2=0x%x" % (
            dxgi, fmt_name, dim, misc, array_size, misc2)
    elif pf_flags & 0x4:
        fmt = "FourCC %r" % fourcc.decode("latin-1")
        block = FOURCC_BLOCK.get(fourcc)
    else:
        fmt = "uncompressed %d bpp masks R=%08x G=%08x B=%08x A=%08x" % (bitcount, rm, gm, bm, am)
        bpp = bitcount
    if caps2 & 0x200 and faces == 1:
        faces = sum(1 for b in range(10, 16) if caps2 & (1 << b))
    nlev = mips if (flags & 0x20000 and mips) else 1
    body = 0
    levels = []
    for i in range(nlev):
        lw, lh = max(w >> i, 1), max(h >> i, 1)
        if block:
            n = ((lw + 3) // 4) * ((lh + 3) // 4) * block
        elif bpp:
            n = (lw * lh * bpp + 7) // 8
        else:
            print("%s: unknown format %s" % (path, fmt))
            return False
        levels.append("%dx%d:%d" % (lw, lh, n))
        body += n
    body *= array_size * faces
    ok = (hdr + body == len(d)) and size == 124 and pf_size == 32
    print("%s: %s" % (path, "OK" if ok else "MISMATCH"))
    print("  %dx%d mipMapCount=%d (levels used %d) %s" % (w, h, mips, nlev, fmt))
    print("  dwFlags=0x%x (%s) pitchOrLinearSize=%d depth=%d ddspf.dwFlags=0x%x (%s) caps=0x%x (%s) caps2=0x%x"
          % (flags, names(flags, DDSD), pitch, depth, pf_flags, names(pf_flags, DDPF), caps, names(caps, CAPS), caps2))
    print("  levels: %s" % " ".join(levels))
    print("  file size %d = header %d + data %d%s" % (len(d), hdr, body, "" if ok else "  (expected %d)" % (hdr + body)))
    return ok


if __name__ == "__main__":
    good = all([check(f) for f in sys.argv[1:]])
    sys.exit(0 if good else 1)
