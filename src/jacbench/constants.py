"""Facts several modules share, written once: frameworks, problems, dtypes, tolerances, units."""

from __future__ import annotations

# Every framework a strategy can belong to; the first three differentiate automatically.
FRAMEWORKS = ("torch", "tensorflow", "jax", "numpy")
AD_FRAMEWORKS = FRAMEWORKS[:3]
# How each framework is named in prose, tables and figure legends.
FRAMEWORK_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "numpy": "numpy"}

# The problems a strategy can differentiate (a profile group's "problem").
PROBLEMS = ("gbm", "moments", "moments-batch", "asian")
# The problems simulated on the GBM's paths (problems.gbm's parameters and normals): S_T itself,
# and the arithmetic-average call on the same paths (problems.asian).
PATH_PROBLEMS = ("gbm", "asian")
DTYPES = ("float32", "float64")

# Where a case runs: the CPU, or a CUDA GPU. jacbench runs PyTorch and JAX on a GPU; TensorFlow
# and numpy on the CPU only (TensorFlow is not installed on the GPU machine the gpu profile is
# measured on, and numpy has no GPU).
DEVICES = ("cpu", "cuda")
GPU_FRAMEWORKS = ("torch", "jax")

# The largest error against the closed form that still counts as a correct answer (the tests
# and the worker both use it: a larger error makes a measurement an error row, not a time).
TOLERANCE = {"float32": 1e-4, "float64": 1e-10}

# The allocators a case can run under: glibc's malloc as it comes, glibc with its mmap threshold
# fixed at 64 KiB (every larger block a mapping of its own, returned when freed), and jemalloc.
ALLOCATORS = ("glibc", "glibc-mmap", "jemalloc")
# Variants of glibc run on request, to tell memory the program holds from memory malloc keeps
# (the worker reads mallinfo2 under each glibc): one arena only, which rules out per-thread
# arenas as the keeper, and malloc_trim(0) after every call, which gives back what is kept.
# The chapters' tables and figures go over ALLOCATORS only.
ALLOCATOR_EXPERIMENTS = ("glibc-arena1", "glibc-trim")
# glibc as the cases timed in several processes run it (thresholds fixed, measure.heap.STEADY)
# and with no block a mapping of its own (MALLOC_MMAP_MAX_=0): what mapping the arrays above
# 32 MiB afresh on every call costs those cases, in time and in memory (the GBM chapter's method).
HEAP_ALLOCATOR = "glibc-heap"
# Every allocator a case may name.
ALL_ALLOCATORS = (*ALLOCATORS, *ALLOCATOR_EXPERIMENTS, HEAP_ALLOCATOR)

# What became of one measurement.
STATUSES = ("ok", "memory-cap", "timeout", "error", "skipped-predicted")
# A case whose predicted peak is above this multiple of its memory cap is skipped
# (skipped-predicted), not run: a prediction that far over the cap would fail.
SKIP_ABOVE = 1.5

MIB = 2**20
GIB = 2**30
