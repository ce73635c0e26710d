#!/usr/bin/env python3
"""Wrap the block data of a KTX1 file (as written by `basisu -unpack`) into a DX10-header DDS file.

Usage: python3 tests/data/dds/make_bc7_dds.py IN.ktx OUT.dds DXGI_FORMAT_NUMBER
e.g.   python3 tests/data/dds/make_bc7_dds.py uastc_coffee_transcoded_BC7_RGBA_0000.ktx bc7.dds 99

The blocks are copied unchanged, level by level (full mip chain, level 0 first); only the container
changes. The header follows what DirectXTex writes for a 2D texture with a DX10 extension:
dwFlags = CAPS|HEIGHT|WIDTH|PIXELFORMAT|MIPMAPCOUNT|LINEARSIZE, dwPitchOrLinearSize = size of level 0,
ddspf = FOURCC 'DX10', dwCaps = TEXTURE|MIPMAP|COMPLEX (TEXTURE only when there is a single level),
DDS_HEADER_DXT10 = {dxgiFormat, D3D10_RESOURCE_DIMENSION_TEXTURE2D (3), miscFlag 0, arraySize 1, miscFlags2 0}.
"""
import struct
import sys

KTX1_ID = b"\xabKTX 11\xbb\r\n\x1a\n"
# GL internal format -> (bytes per 4x4 block, DXGI formats it may be labelled as)
GL_BLOCK = {0x83F0: (8, (70, 71, 72)), 0x83F1: (8, (70, 71, 72)), 0x8C4C: (8, (70, 71, 72)), 0x8C4D: (8, (70, 71, 72)),
            0x83F3: (16, (76, 77, 78)), 0x8C4F: (16, (76, 77, 78)),
            0x8DBB: (8, (79, 80)), 0x8DBD: (16, (82, 83)),
            0x8E8C: (16, (97, 98, 99)), 0x8E8D: (16, (97, 98, 99))}


def read_ktx1(path):
    d = open(path, "rb").read()
    assert d[:12] == KTX1_ID, "not a KTX1 file"
    (endian, gl_type, gl_type_size, gl_format, gl_ifmt, gl_base, w, h, depth, arr, faces, mips,
     kvd_len) = struct.unpack_from("<13I", d, 12)
    assert endian == 0x04030201, "big-endian KTX1 not supported"
    assert depth == 0 and arr == 0 and faces == 1, "only plain 2D KTX1 files"
    p = 64 + kvd_len
    levels = []
    for i in range(max(mips, 1)):
        (n,) = struct.unpack_from("<I", d, p)
        p += 4
        levels.append(d[p:p + n])
        p += n
        p = (p + 3) & ~3  # mipPadding
    return gl_ifmt, w, h, levels


def main():
    src, dst, dxgi = sys.argv[1], sys.argv[2], int(sys.argv[3])
    gl_ifmt, w, h, levels = read_ktx1(src)
    block, allowed = GL_BLOCK[gl_ifmt]
    assert dxgi in allowed, "DXGI %d does not match GL internal format 0x%04x" % (dxgi, gl_ifmt)
    for i, lv in enumerate(levels):
        lw, lh = max(w >> i, 1), max(h >> i, 1)
        assert len(lv) == ((lw + 3) // 4) * ((lh + 3) // 4) * block, "level %d size %d" % (i, len(lv))
    mips = len(levels)
    flags = 0x1 | 0x2 | 0x4 | 0x1000 | 0x20000 | 0x80000
    caps = 0x1000 | ((0x400000 | 0x8) if mips > 1 else 0)
    hdr = b"DDS " + struct.pack("<7I", 124, flags, h, w, len(levels[0]), 0, mips) + b"\0" * 44
    hdr += struct.pack("<II4s5I", 32, 0x4, b"DX10", 0, 0, 0, 0, 0)
    hdr += struct.pack("<5I", caps, 0, 0, 0, 0)
    hdr += struct.pack("<5I", dxgi, 3, 0, 1, 0)
    assert len(hdr) == 148
    with open(dst, "wb") as f:
        f.write(hdr)
        for lv in levels:
            f.write(lv)
    print("%s: %dx%d, %d levels, GL 0x%04x -> DXGI %d, %d bytes" % (dst, w, h, mips, gl_ifmt, dxgi,
                                                                    148 + sum(map(len, levels))))


if __name__ == "__main__":
    main()
