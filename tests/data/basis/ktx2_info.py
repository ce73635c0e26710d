#!/usr/bin/env python3
"""Print the header, level index, DFD and key/value data of KTX2 files (no dependencies).

Usage: python3 tests/data/basis/ktx2_info.py FILE.ktx2 [...]
Checks that the level index is in range and that levels are stored smallest-last-in-index /
largest-offset-first as the spec requires, and exits non-zero on any structural problem.
"""
import struct
import sys

KTX2_ID = b"\xabKTX 20\xbb\r\n\x1a\n"
SCHEMES = {0: "none", 1: "BasisLZ", 2: "Zstandard", 3: "ZLIB"}
MODELS = {1: "RGBSDA", 160: "BC1A", 161: "BC2", 162: "BC3", 163: "ETC1S", 166: "UASTC", 167: "UASTC_HDR (reserved)",
          168: "UASTC_HDR_6x6 (reserved)"}
XFER = {1: "linear", 2: "sRGB"}
UASTC_CH = {0: "RGB", 3: "RGBA", 4: "RRR", 5: "RRRG", 6: "RG"}
ETC1S_CH = {0: "RGB", 3: "RRR", 4: "GGG", 15: "AAA"}
RGBSDA_CH = {0: "R", 1: "G", 2: "B", 13: "S", 14: "D", 15: "A"}


def chan_name(model, cid):
    table = {166: UASTC_CH, 163: ETC1S_CH}.get(model, RGBSDA_CH)
    return table.get(cid, "?")


def info(path):
    d = open(path, "rb").read()
    ok = True
    if d[:12] != KTX2_ID:
        print("%s: not KTX2" % path)
        return False
    (vk, type_size, w, h, depth, layers, faces, levels, scheme) = struct.unpack_from("<9I", d, 12)
    dfd_off, dfd_len, kvd_off, kvd_len = struct.unpack_from("<4I", d, 48)
    sgd_off, sgd_len = struct.unpack_from("<2Q", d, 64)
    print("%s: %d bytes" % (path, len(d)))
    print("  vkFormat=%d typeSize=%d %dx%dx%d layers=%d faces=%d levelCount=%d supercompressionScheme=%d (%s)"
          % (vk, type_size, w, h, depth, layers, faces, levels, scheme, SCHEMES.get(scheme, "?")))
    print("  dfd @%d len %d, kvd @%d len %d, sgd @%d len %d" % (dfd_off, dfd_len, kvd_off, kvd_len, sgd_off, sgd_len))
    for i in range(max(levels, 1)):
        off, ln, uln = struct.unpack_from("<3Q", d, 80 + 24 * i)
        lw, lh = max(w >> i, 1), max(h >> i, 1)
        note = ""
        if off + ln > len(d):
            note = "  OUT OF RANGE"
            ok = False
        print("  level %d: %dx%d offset=%d length=%d uncompressed=%d (%dx%d blocks)%s"
              % (i, lw, lh, off, ln, uln, (lw + 3) // 4, (lh + 3) // 4, note))
    # DFD
    total = struct.unpack_from("<I", d, dfd_off)[0]
    p = dfd_off + 4
    while p < dfd_off + total:
        w0, w1 = struct.unpack_from("<II", d, p)
        vendor, dtype = w0 & 0x1FFFF, w0 >> 17
        version, bsize = w1 & 0xFFFF, w1 >> 16
        model, prim, xfer, flags = d[p + 8:p + 12]
        dims = [x + 1 for x in d[p + 12:p + 16]]
        planes = list(d[p + 16:p + 24])
        print("  DFD block: vendor=%d type=%d version=%d size=%d colorModel=%d (%s) primaries=%d transfer=%d (%s) "
              "flags=%d (%s) texelBlock=%s bytesPlane=%s"
              % (vendor, dtype, version, bsize, model, MODELS.get(model, "?"), prim, xfer, XFER.get(xfer, "?"), flags,
                 "premultiplied" if flags & 1 else "straight", "x".join(map(str, dims)), planes))
        nsamples = (bsize - 24) // 16
        for s in range(nsamples):
            q = p + 24 + 16 * s
            bit_off, bit_len, ctype = struct.unpack_from("<HBB", d, q)
            pos = list(d[q + 4:q + 8])
            lower, upper = struct.unpack_from("<II", d, q + 8)
            cid = ctype & 0xF
            qual = "".join(c for c, b in (("F", 0x80), ("S", 0x40), ("E", 0x20), ("L", 0x10)) if ctype & b)
            print("    sample %d: bitOffset=%d bitLength=%d channelId=%d (%s)%s pos=%s lower=0x%08x upper=0x%08x"
                  % (s, bit_off, bit_len + 1, cid, chan_name(model, cid), (" qualifiers=" + qual) if qual else "",
                     pos, lower, upper))
        p += bsize
    # KVD
    p, end = kvd_off, kvd_off + kvd_len
    while p < end:
        n = struct.unpack_from("<I", d, p)[0]
        kv = d[p + 4:p + 4 + n]
        k, _, v = kv.partition(b"\0")
        vs = v.rstrip(b"\0")
        try:
            vtxt = repr(vs.decode("utf-8"))
        except UnicodeDecodeError:
            vtxt = vs.hex()
        print("  KVD %r = %s (%d value bytes incl. NUL)" % (k.decode(), vtxt, len(v)))
        p += 4 + n
        p = (p + 3) & ~3
    if scheme == 1 and sgd_len:
        ecb, scb, eb, sb, tb, ext = struct.unpack_from("<HHIIII", d, sgd_off)
        print("  BasisLZ SGD: endpointCount=%d selectorCount=%d endpointsByteLength=%d selectorsByteLength=%d "
              "tablesByteLength=%d extendedByteLength=%d" % (ecb, scb, eb, sb, tb, ext))
    return ok


if __name__ == "__main__":
    good = all([info(f) for f in sys.argv[1:]])
    sys.exit(0 if good else 1)
