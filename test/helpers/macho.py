#!/usr/bin/env python3
"""A small reader of 64-bit Mach-O files and of ar archives of them, for
test/sh/macos_build.sh: the machine has no Mach-O tools of its own.

    macho.py arch FILE        the CPU of a Mach-O file, or of every object in
                              an archive, one per line (arm64, x86_64, other:N);
                              exit 1 when FILE holds no Mach-O at all
    macho.py undefined FILE   the external symbols it imports (undefined in
                              its symbol table), one per line, sorted
"""
import struct
import sys

MH_MAGIC_64 = 0xFEEDFACF
LC_SYMTAB = 0x2
N_TYPE, N_UNDF, N_EXT = 0x0E, 0x0, 0x01
CPUS = {0x0100000C: "arm64", 0x01000007: "x86_64"}


def objects(data):
    """The Mach-O images in a file: itself, or an archive's members."""
    if data[:8] != b"!<arch>\n":
        yield data
        return
    off = 8
    while off + 60 <= len(data):
        hdr = data[off:off + 60]
        name = hdr[:16].decode("ascii", "replace").strip()
        size = int(hdr[48:58].decode("ascii").strip() or 0)
        body = data[off + 60:off + 60 + size]
        if name.startswith("#1/"):  # BSD: the name leads the body
            body = body[int(name[3:]):]
        if len(body) >= 4 and struct.unpack_from("<I", body)[0] == MH_MAGIC_64:
            yield body
        off += 60 + size + (size & 1)


def header(img):
    if len(img) < 32 or struct.unpack_from("<I", img)[0] != MH_MAGIC_64:
        return None
    _, cpu, _, _, ncmds, _, _, _ = struct.unpack_from("<IiiIIIII", img)
    return cpu & 0xFFFFFFFF, ncmds


def symbols(img):
    """(name, defined) for each external symbol."""
    cpu, ncmds = header(img)
    off = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", img, off)
        if cmd == LC_SYMTAB:
            symoff, nsyms, stroff, _ = struct.unpack_from("<IIII", img, off + 8)
            for i in range(nsyms):
                strx, ntype, _, _, _ = struct.unpack_from("<IBBHQ", img, symoff + 16 * i)
                if ntype & N_EXT:
                    end = img.index(b"\0", stroff + strx)
                    name = img[stroff + strx:end].decode("ascii", "replace")
                    yield name, ntype & N_TYPE != N_UNDF
        off += size


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("arch", "undefined"):
        sys.exit(__doc__)
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    imgs = [i for i in objects(data) if header(i)]
    if not imgs:
        print(f"{sys.argv[2]}: no 64-bit Mach-O in it", file=sys.stderr)
        sys.exit(1)
    if sys.argv[1] == "arch":
        cpus = {CPUS.get(header(i)[0], "other:%#x" % header(i)[0]) for i in imgs}
    else:
        # An archive's own objects define some of what others import: not imports.
        wanted, defined = set(), set()
        for i in imgs:
            for name, is_defined in symbols(i):
                (defined if is_defined else wanted).add(name)
        cpus = wanted - defined
    print("\n".join(sorted(cpus)))


if __name__ == "__main__":
    main()
