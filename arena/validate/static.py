"""Writes the 20 files of HttpArena's data/static under the folder given,
with the names and sizes of theirs (commit in httparena/README.md) and a
.gz sibling for each of the 15 text files: what scripts/validate.sh
checks a static mount against (names, types, sizes on disk, precompressed
siblings). Their content is made here, deterministically, so the 1.8 MB
of theirs is not copied into this repository; a checkout's own
data/static is used instead when HTTPARENA names one (run.sh)."""
import gzip
import os
import random
import sys

SIZES = {
    "reset.css": 8192, "layout.css": 25600, "theme.css": 18432,
    "components.css": 204800, "utilities.css": 61440, "analytics.js": 12288,
    "helpers.js": 22528, "app.js": 204800, "vendor.js": 307200,
    "router.js": 35840, "header.html": 122880, "footer.html": 56320,
    "regular.woff2": 18432, "bold.woff2": 22528, "logo.svg": 15344,
    "icon-sprite.svg": 71680, "hero.webp": 46080, "thumb1.webp": 8192,
    "thumb2.webp": 6144, "manifest.json": 2883,
}
BINARY = (".woff2", ".webp")


def content(name, size):
    rng = random.Random(name)
    if name.endswith(BINARY):
        return rng.randbytes(size)
    line = f"/* {name}: HttpArena static fixture */\n".encode()
    text = bytearray()
    while len(text) < size:
        text += line + str(rng.random()).encode() + b"\n"
    return bytes(text[:size])


def main(folder):
    os.makedirs(folder, exist_ok=True)
    for name, size in SIZES.items():
        data = content(name, size)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        if not name.endswith(BINARY):
            with open(os.path.join(folder, name + ".gz"), "wb") as f:
                f.write(gzip.compress(data, mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
