"""Sweeps on a CUDA GPU through numba-cuda. ``arithmetic``: the engine's per-state arithmetic as
numba-compatible functions; ``cuda_kernels``: the device kernels built from it; ``driver``: the
engine that owns device memory and launches them. Imports run one way: driver -> cuda_kernels ->
arithmetic."""
