#!/usr/bin/env python3
# svg-spans.py - checks a PNG that rsvg-convert made of scr_log's SVG: its size is
# the SVG's, and the widest span of each kind, rendered alone, has that span's colour.
# usage: svg-spans.py SVG PNG KIND...   (prints one line per check, exits 1 on a mismatch)
import os
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"


def read_png(path):
    """width, height and rows of RGB(A) tuples of an 8-bit, non-interlaced PNG"""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError("PNG kind not handled: depth %d colour %d" % (depth, colour))
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if filt == 1:
                line[i] = (line[i] + a) & 255
            elif filt == 2:
                line[i] = (line[i] + b) & 255
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return width, height, rows, bpp


def marker_xs(root):
    """x of every marker: a span under one is not its own colour there"""
    xs = []
    for p in root.iter(SVG_NS + "path"):
        if (p.get("class") or "").startswith("marker"):
            nums = [float(v) for v in re.findall(r"-?[0-9.]+", p.get("d"))]
            xs.append((min(nums[0::2]), max(nums[0::2])))
    return xs


def render_zoomed(svg_path, x, y, size=0.5, pixels=8):
    """the picture around (x, y), size SVG units across, as pixels x pixels"""
    tree = ET.parse(svg_path)
    root = tree.getroot()
    root.set("viewBox", "%f %f %f %f" % (x - size / 2, y - size / 2, size, size))
    root.set("width", str(pixels))
    root.set("height", str(pixels))
    with tempfile.TemporaryDirectory() as tmp:
        zsvg, zpng = os.path.join(tmp, "z.svg"), os.path.join(tmp, "z.png")
        tree.write(zsvg)
        subprocess.run(["rsvg-convert", "-o", zpng, zsvg], check=True)
        return read_png(zpng)


def main():
    ET.register_namespace("", SVG_NS[1:-1])
    svg_path, png_path, kinds = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = ET.parse(svg_path).getroot()
    width, height, rows, bpp = read_png(png_path)
    bad = 0
    want_w, want_h = int(root.get("width")), int(root.get("height"))
    print("size %dx%d, SVG %dx%d" % (width, height, want_w, want_h))
    if (width, height) != (want_w, want_h):
        bad = 1
    markers = marker_xs(root)
    for kind in kinds:
        rects = [r for r in root.iter(SVG_NS + "rect") if r.get("class") == "span " + kind]
        centre = lambda e: float(e.get("x")) + float(e.get("width")) / 2
        clear = [r for r in rects if not any(lo - 1 <= centre(r) <= hi + 1 for lo, hi in markers)]
        if not clear:
            print("%s: no span%s" % (kind, " clear of markers" if rects else ""))
            bad = 1
            continue
        r = max(clear, key=lambda e: float(e.get("width")))
        x = float(r.get("x")) + float(r.get("width")) / 2
        y = float(r.get("y")) + float(r.get("height")) / 2
        zw, zh, zrows, zbpp = render_zoomed(svg_path, x, y)
        px = tuple(zrows[zh // 2][(zw // 2) * zbpp:(zw // 2) * zbpp + 3])
        fill = r.get("fill").lstrip("#")
        want = tuple(int(fill[i:i + 2], 16) for i in (0, 2, 4))
        # a translucent span lies on white: its colour is mixed with it
        alpha = float(r.get("fill-opacity", "1"))
        want = tuple(round(alpha * v + (1 - alpha) * 255) for v in want)
        same = all(abs(p - w) <= 3 for p, w in zip(px, want))
        print("%s: rendered at (%.1f,%.1f) #%02x%02x%02x, span fill #%02x%02x%02x: %s"
              % ((kind, x, y) + px + want + ("ok" if same else "MISMATCH",)))
        bad |= not same
    return bad


if __name__ == "__main__":
    sys.exit(main())
