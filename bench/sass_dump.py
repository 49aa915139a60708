#!/usr/bin/env python3
"""Machine code of our Vulkan pipelines on an NVIDIA GPU, for reading (bench/gpu_session.sh inspect).

NVIDIA's driver offers no internal representations through VK_KHR_pipeline_executable_properties
and Nsight Compute does not see Vulkan dispatches, but its VkPipelineCache data (what turboprof
saves under TKV_CACHE_DIR) holds every compiled pipeline: entries tagged "CPKV", each a zstd frame
that unpacks to a container starting "NVDANVVMNVuc" whose section table (at byte 0x48: count,
size, offset) points at the SASS (16-byte instructions, 8 bytes after the offset). This writes
each entry's code as <out>/<n>.bin, counts its instructions by opcode, and disassembles it with
`nvdisasm -b SM90` where the CUDA tools are installed (the device machine has them).

  python3 bench/sass_dump.py OUT_DIR CACHE_FILE_OR_DIR...     (needs the zstd command)
"""
import collections
import os
import shutil
import struct
import subprocess
import sys

ZSTD = b"\x28\xb5\x2f\xfd"
OPCODES = {0x03c: "HMMA", 0x184: "LDS", 0x188: "STS", 0x181: "LDG", 0x189: "SHFL", 0x019: "SHF",
           0x012: "LOP3", 0x024: "IMAD", 0x010: "IADD3", 0x023: "FFMA", 0x021: "FADD", 0x020: "FMUL",
           0x016: "PRMT", 0x00c: "ISETP", 0x00b: "FSETP", 0x008: "FSEL", 0x007: "SEL", 0x011: "LEA",
           0x108: "MUFU", 0x002: "MOV", 0x147: "BRA", 0x11d: "BAR", 0x031: "HFMA2", 0x030: "HADD2?",
           0x032: "HMUL2", 0x119: "S2R", 0x186: "STG", 0x182: "LDC", 0x005: "IMNMX?", 0x009: "FMNMX"}


def containers(blob):
    at = blob.find(ZSTD)
    while at >= 0:
        nxt = blob.find(ZSTD, at + 4)
        frame = blob[at:nxt if nxt > 0 else len(blob)]
        r = subprocess.run(["zstd", "-d", "-c", "-q"], input=frame, capture_output=True)
        if r.stdout.startswith(b"NVDANVVMNVuc"):
            yield r.stdout
        at = nxt


def code_of(container):
    _, size, off = struct.unpack_from("<3I", container, 0x48)
    code = container[off + 8:off + size]
    return code[:len(code) // 16 * 16]


def histogram(code):
    c = collections.Counter()
    for i in range(0, len(code) - 15, 16):
        c[OPCODES.get(struct.unpack_from("<Q", code, i)[0] & 0x1ff, "other")] += 1
    return c


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    tool = shutil.which("nvdisasm") or ("/usr/local/cuda/bin/nvdisasm" if os.path.exists("/usr/local/cuda/bin/nvdisasm") else None)
    n = 0
    for p in paths:
        names = [os.path.join(p, f) for f in sorted(os.listdir(p))] if os.path.isdir(p) else [p]
        for f in (f for f in names if os.path.isfile(f)):  # (the cache's spirv/ folder: skipped)
            for container in containers(open(f, "rb").read()):
                code = code_of(container)
                name = os.path.join(out, "%02d.bin" % n)
                open(name, "wb").write(code)
                h = histogram(code)
                print("%s: %d instructions: %s" % (name, len(code) // 16,
                                                   ", ".join("%s %d" % kv for kv in h.most_common(12))))
                if tool:
                    r = subprocess.run([tool, "-b", "SM90", "-hex", name], capture_output=True, text=True)
                    open(name[:-4] + ".sass", "w").write(r.stdout + r.stderr)
                n += 1
    print("%d pipelines; disassembler: %s" % (n, tool or "none"))


if __name__ == "__main__":
    main()
