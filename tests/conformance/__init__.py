"""Conformance suite: real-code Triton kernels with float64 references and GPU golden outputs."""
