#!/usr/bin/env python3
"""The folders of the PyTorch environment's nvidia packages that hold cuDNN, the CUDA 13
runtime and NCCL, joined by ':' for LD_LIBRARY_PATH (empty where none is found). The
GPU scripts load these at run time rather than carry them: they are too large."""
import glob
import os
import site

PATTERNS = ("nvidia/cudnn/lib/libcudnn.so.9", "nvidia/*/lib/libcudart.so.13*", "nvidia/nccl/lib/libnccl.so.2")

dirs = set()
for root in site.getsitepackages():
    for pattern in PATTERNS:
        for found in glob.glob(os.path.join(root, pattern)):
            dirs.add(os.path.dirname(found))
print(":".join(sorted(dirs)))
